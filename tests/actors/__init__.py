"""Tests of ``subagents.actors``: the kernel (supervisor, bus, statuses)."""
