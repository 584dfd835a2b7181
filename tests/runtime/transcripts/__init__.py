"""Tests of transcripts (``subagents.runtime._transcripts``)."""
