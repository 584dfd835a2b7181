"""Tests of ``subagents.tools``: the tool protocol, filters, approval and the workspace."""
