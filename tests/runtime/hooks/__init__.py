"""Tests of hooks (``subagents.runtime._hooks``)."""
