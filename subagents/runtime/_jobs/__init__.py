"""The runtime's side of agent jobs (``subagents.jobs`` is the engine).

``rows.py`` runs one row as one agent of a runtime (:func:`run_row`), the
function every backend calls, a Ray worker's included; ``local.py`` is the
local backend, rows as agents of this process's runtime; ``backends.py``
picks the backend a job names; ``ray/`` is the Ray backend.
"""
