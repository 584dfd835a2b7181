"""subagents: LLM subagents as supervised Trio actors."""
