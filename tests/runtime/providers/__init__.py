"""Tests of the model providers (``subagents.runtime._providers``)."""
