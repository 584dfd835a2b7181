"""Tests of ``subagents.demo``: the kernel demo and the offline survey policies."""
