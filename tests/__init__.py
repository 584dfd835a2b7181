"""The test suite: one folder per package of ``subagents``, plus cross-cutting attack tests."""
