"""Tests of the runtime configuration (``subagents.runtime._config``)."""
