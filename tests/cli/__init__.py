"""Tests of ``subagents.cli``: the command line, its output and the README's promises."""
