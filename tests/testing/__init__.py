"""Tests of ``subagents.testing``: the public test kit."""
