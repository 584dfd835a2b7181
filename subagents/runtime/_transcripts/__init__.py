"""Transcripts: every message and result of an agent, one JSON line each, on disk.

:mod:`.writer` appends them (:class:`~subagents.runtime.TranscriptWriter`) to
a file opened by :mod:`.file` and held under :mod:`.lock`; :mod:`.records` is
the line format; :mod:`.load` reads transcripts back; :mod:`.retention` removes
old sessions. Their errors are in :mod:`subagents.runtime._exceptions`.
"""
