"""Tests of the built-in tools (``subagents.tools._builtin``)."""
