"""The Ray backend: a :class:`~subagents.jobs.JobBackend` whose rows run on Ray workers.

``RayBackend.run`` imports Ray (an optional extra: ``pip install
'subagents[ray]'``), joins the cluster at ``options.address`` (or the one this
process joined, or a new local one that it stops at the end), starts
``options.workers`` workers, each hosting its own runtime opened in ``cwd`` with
the driver's settings overrides and state dir, and runs the job's rows there
(see ``dispatch.py``). Workers load the settings files of ``cwd`` and ``home``
themselves: on a cluster, those paths and the state dir must be the same
shared filesystem on every node, so transcripts and agent files are where the
driver looks for them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, final

import trio

from subagents.actors import Event
from subagents.jobs import RowOutcome, RowRequest
from subagents.runtime._jobs.ray.connect import connect, import_ray, shutdown
from subagents.runtime._jobs.ray.dispatch import Dispatch
from subagents.runtime._jobs.ray.options import RayOptions
from subagents.runtime._jobs.ray.wire import WorkerSpec
from subagents.runtime._jobs.ray.worker import (
    ProviderFactory,
    RunRow,
    RuntimeOpener,
    ToolsFactory,
)

__all__ = ["RayBackend"]


@final
class RayBackend:
    """Runs a job's rows on Ray workers (see the module docstring).

    ``opener`` is :func:`~subagents.runtime.open_runtime` (pass it as is): each
    worker opens its runtime with it.

    ``overrides`` are settings shaped like a file, applied by every worker
    over its ``cwd``'s files; ``state_dir`` (default: the overrides' or the
    settings') is where workers write transcripts. ``provider_factory`` makes
    each worker's provider in its own process (``None``: the configured
    provider); ``tools_factory`` makes there the tools every agent is
    offered besides the built-in ones (``open_runtime``'s ``tools``);
    ``run_row`` replaces the function that runs a row (tests). After a run,
    :attr:`last` holds its dispatch: worker pids, workers lost, rows
    reassigned, events dropped. The factories and ``run_row`` travel to the
    workers by Ray's cloudpickle: module-level functions of an importable
    module (or one registered by value).
    """

    name = "ray"

    def __init__(
        self,
        options: RayOptions | None = None,
        *,
        opener: RuntimeOpener,
        cwd: str | os.PathLike[str],
        home: str | os.PathLike[str] | None = None,
        state_dir: str | os.PathLike[str] | None = None,
        overrides: Mapping[str, Any] | None = None,
        trust_project: bool | None = None,
        provider_factory: ProviderFactory | None = None,
        tools_factory: ToolsFactory | None = None,
        run_row: RunRow | None = None,
    ) -> None:
        self.options = options if options is not None else RayOptions()
        settings = dict(overrides or {})
        if state_dir is not None:
            settings["state_dir"] = str(Path(state_dir).resolve())
        self._spec = WorkerSpec(
            cwd=str(Path(cwd).resolve()),
            home=None if home is None else str(Path(home).resolve()),
            overrides=settings,
            trust_project=trust_project,
            concurrency=self.options.concurrency,
            event_capacity=self.options.event_capacity,
        )
        self._opener = opener
        self._provider_factory = provider_factory
        self._tools_factory = tools_factory
        self._run_row = run_row
        self.last: Dispatch | None = None

    async def run(
        self,
        requests: trio.MemoryReceiveChannel[RowRequest],
        outcomes: trio.MemorySendChannel[RowOutcome],
        publish: Callable[[Event], None],
    ) -> None:
        """Run every request to exactly one outcome (see :class:`~subagents.jobs.JobBackend`)."""
        ray = import_ray()
        options = self.options
        started = await connect(ray, options.address, options.connect_timeout)
        try:
            dispatch = self.last = Dispatch(
                ray=ray,
                options=options,
                spec=self._spec,
                opener=self._opener,
                outcomes=outcomes,
                publish=publish,
                run_row=self._run_row,
                provider_factory=self._provider_factory,
                tools_factory=self._tools_factory,
            )
            await dispatch.run(requests)
        finally:
            if started:
                await shutdown(ray, options.close_timeout)
