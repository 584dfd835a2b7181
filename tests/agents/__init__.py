"""Tests of ``subagents.agents``: agent definitions, their files and scopes."""
