"""Agent jobs: one agent per row of a CSV or JSONL file, with durable state.

The package sits between ``teams`` and ``runtime``: the job engine reads
rows, hands them to a :class:`JobBackend` as :class:`RowRequest` values over a
bounded channel, and records each :class:`RowOutcome`. The runtime supplies the
backends (local agents, or Ray workers that each host a runtime).
"""

from subagents.jobs._backend import JobBackend, RowOutcome, RowRequest, RowStatus

__all__ = ["JobBackend", "RowOutcome", "RowRequest", "RowStatus"]
