"""The workload every peer script runs, and how one run of it is measured.

Each script of this folder (``peer_<framework>.py``) defines
``run_agents(agents, latency) -> int``: ``agents`` agents run at once (an
``asyncio.gather`` or a Trio nursery), each for :data:`TURNS` turns of ONE call
of a trivial ``add(a, b)`` tool, then a final text. Its fake model waits
``latency`` seconds per call (``asyncio.sleep``, or the framework's own idiom),
answers an ``add`` call while the agent has made fewer than :data:`TURNS`, and
:data:`FINAL` after: :data:`TURNS` + 1 model calls per agent, so the ideal
elapsed time is ``(TURNS + 1) * latency``. It returns the number of ``add``
calls the tool itself saw, and raises when an agent did not end with
:data:`FINAL`.

:func:`main` is each script's command line (``--agents``, ``--latency``,
``--mode time|memory``); it prints one JSON object on its last line, which
``bench_peers.py`` reads from a subprocess (a framework that hangs is killed at
the driver's timeout and cannot stop the bench). A line ``{"started": ...}``
comes first, when the measured run begins, so the driver's timeout counts the
run, not the imports and the warm-up.

- ``time``: a warm-up run of :data:`WARMUP_AGENTS` agents (lazy imports,
  schema caches), a garbage collection, then the measured run: ``elapsed``
  (``time.perf_counter``) and ``cpu`` (``time.process_time``, this process's
  CPU on every thread, plus that of the child processes it started and
  reaped during the run: the transcripts' helper process) seconds.
- ``memory``: the same warm-up, then the run under ``tracemalloc``:
  ``bytes_per_agent`` is the peak of traced memory during the run above what
  was allocated before it, divided by ``agents`` (every agent is alive at once,
  with its conversation, at that peak).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

TURNS = 10
FINAL = "done"
WARMUP_AGENTS = 4


class WorkloadError(RuntimeError):
    """An agent did not do the workload (wrong tool-call count or final text)."""


def check(outputs: list[str], calls: int, agents: int) -> int:
    """Raise unless every agent ended with :data:`FINAL` after ``TURNS`` calls each."""
    wrong = [o for o in outputs if o != FINAL]
    if len(outputs) != agents or wrong:
        raise WorkloadError(f"{len(wrong)} of {agents} agents ended with {wrong[:1]!r}")
    if calls != agents * TURNS:
        raise WorkloadError(f"{calls} tool calls for {agents} agents x {TURNS} turns")
    return calls


def measure(
    run: Callable[[int, float], int], agents: int, latency: float, mode: str
) -> dict[str, Any]:
    """Warm up, then one measured ``run(agents, latency)`` as ``mode`` says."""
    run(WARMUP_AGENTS, 0.0)
    gc.collect()
    print(json.dumps({"started": time.time()}), flush=True)
    if mode == "memory":
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        calls = run(agents, latency)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return {"agents": agents, "tool_calls": calls, "bytes_per_agent": (peak - before) / agents}
    cpu0, children0, wall0 = time.process_time(), _children_cpu(), time.perf_counter()
    calls = run(agents, latency)
    elapsed, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    cpu += _children_cpu() - children0
    return {"agents": agents, "tool_calls": calls, "elapsed": elapsed, "cpu": cpu}


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for (a
    runtime's transcript helper process, reaped when the runtime closes)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(run: Callable[[int, float], int], argv: list[str] | None = None) -> int:
    """The command line of a peer script: print the measurement as JSON on the last line."""
    parser = argparse.ArgumentParser(description="One run of the peer workload.")
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per model call")
    parser.add_argument("--mode", choices=("time", "memory"), default="time")
    args = parser.parse_args(argv)
    result = measure(run, args.agents, args.latency, args.mode)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit("run one of the peer_<framework>.py scripts of this folder")
