"""The Ray backend's settings, each default written here once.

``workers`` Ray actors (one process each) run a job's rows, each at most
``concurrency`` rows at a time: the driver never has more than
``workers * concurrency`` rows out on workers. ``address`` is the cluster to
join (``None``: the cluster this process already joined, else a new local
one, stopped when the job ends).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from subagents.actors import is_count, is_seconds
from subagents.runtime._exceptions import ConfigError

__all__ = [
    "DEFAULT_RAY_CONCURRENCY",
    "DEFAULT_RAY_WORKERS",
    "RayOptions",
]

#: Ray workers (actors, one process each) a job starts.
DEFAULT_RAY_WORKERS: Final = 2
#: Rows one worker runs at once (each an agent of its runtime).
DEFAULT_RAY_CONCURRENCY: Final = 64


def _count(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not is_count(value, 1):
        raise ConfigError(
            "code", f"ray.{attribute.name}", "a whole number of at least 1", repr(value)
        )


def _count0(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not is_count(value, 0):
        raise ConfigError(
            "code", f"ray.{attribute.name}", "a whole number of 0 or more", repr(value)
        )


def _seconds(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not is_seconds(value) or value <= 0:
        raise ConfigError(
            "code", f"ray.{attribute.name}", "a positive number of seconds", repr(value)
        )


def _cpus(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not is_seconds(value):  # the same rule: a finite number, 0 or more
        raise ConfigError(
            "code", f"ray.{attribute.name}", "a number of CPUs, 0 or more", repr(value)
        )


@attrs.frozen(kw_only=True)
class RayOptions:
    """How the Ray backend runs a job.

    ``connect_timeout`` bounds reaching the cluster, ``start_timeout`` a
    worker's start (its runtime opened), ``call_timeout`` every other call to
    a worker beyond the ``collect_wait`` a collect may wait for outcomes. A
    worker that dies, or misses a deadline, is replaced while
    ``max_worker_restarts`` (for the whole job) lasts; its unfinished rows run
    again on a fresh or surviving worker. ``batch_size`` bounds the rows one
    call hands a worker; ``event_capacity`` the status events a worker keeps
    for the driver between collects (the oldest are dropped past it).
    ``num_cpus`` is what Ray reserves per worker.
    """

    address: str | None = None
    workers: int = attrs.field(default=DEFAULT_RAY_WORKERS, validator=_count)
    concurrency: int = attrs.field(default=DEFAULT_RAY_CONCURRENCY, validator=_count)
    batch_size: int = attrs.field(default=256, validator=_count)
    connect_timeout: float = attrs.field(default=30.0, validator=_seconds)
    start_timeout: float = attrs.field(default=60.0, validator=_seconds)
    call_timeout: float = attrs.field(default=60.0, validator=_seconds)
    collect_wait: float = attrs.field(default=0.5, validator=_seconds)
    close_timeout: float = attrs.field(default=10.0, validator=_seconds)
    max_worker_restarts: int = attrs.field(default=4, validator=_count0)
    event_capacity: int = attrs.field(default=4096, validator=_count)
    num_cpus: float = attrs.field(default=1.0, validator=_cpus)

    @classmethod
    def from_backend_options(
        cls, options: Mapping[str, Any], *, max_concurrency: int | None = None
    ) -> RayOptions:
        """The settings a job's ``backend_options`` name (``address``, ``workers``...).

        A job's ``max_concurrency`` is its rows at once across all workers: unless
        ``concurrency`` is given, each worker takes its share (rounded up). An
        unknown key raises :class:`ConfigError` listing the known ones.
        """
        known = sorted(field.name for field in attrs.fields(cls))
        for key in options:
            if key not in known:
                raise ConfigError(
                    "the job's backend options",
                    f"ray.{key}",
                    f"one of {', '.join(known)}",
                    reason=f"The Ray backend has no option {key!r} (it knows {', '.join(known)}).",
                )
        values = dict(options)
        workers = values.get("workers", DEFAULT_RAY_WORKERS)
        if max_concurrency is not None and "concurrency" not in values and is_count(workers, 1):
            values["concurrency"] = max(1, -(-max_concurrency // workers))
        return cls(**values)
