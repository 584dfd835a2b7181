"""The Ray backend: a job's rows run on Ray actors, each hosting a Trio runtime of its own.

- ``options.py``: :class:`RayOptions`, the backend's settings and their defaults;
- ``connect.py``: importing Ray (an optional extra) and reaching its cluster, with deadlines;
- ``wire.py``: what crosses between driver and worker (msgspec: the worker's
  settings, its report of outcomes and forwarded bus events);
- ``worker.py``: :class:`RowWorker`, a Ray actor's body: a runtime in a thread
  of its own running ``trio.run``, running many rows concurrently;
- ``dispatch.py``: the driver's side of one job: rows handed out in batches
  with backpressure, outcomes collected, rows of a lost worker run again;
- ``backend.py``: :class:`RayBackend`, the :class:`~subagents.jobs.JobBackend`.

Transcripts go to the state dir the workers share: on one machine the same
path; on a cluster every node must mount it at the same path (NFS, EFS...).
"""

from subagents.runtime._jobs.ray.backend import RayBackend
from subagents.runtime._jobs.ray.options import RayOptions

__all__ = ["RayBackend", "RayOptions"]
