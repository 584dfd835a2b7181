"""Tests of ``subagents.runtime``: the agent loop, the embedded runtime and its subsystems."""
