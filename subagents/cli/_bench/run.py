"""Running the benchmark scenarios: on ``subagents`` and raw Trio, some on asyncio and autogen-core.

The peer scenarios (``peer_*``) run the same agent workload on ``subagents`` and on
the agent frameworks users would pick instead, each measurement in a subprocess.

Each measurement is a fresh ``trio.run`` (or asyncio event loop) after a
garbage collection, and the implementations take turns within a repetition, so
a drift of the machine hits them alike; the repetitions of one scenario on one
implementation make one :class:`Record` (their minimum and median).
"""

from __future__ import annotations

import functools
import gc
import platform
import statistics
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

import trio

from subagents import __version__
from subagents.cli._bench.scenarios import (
    COMPARED,
    PEER_SCENARIOS,
    SCENARIOS,
    BenchRun,
    Record,
    Sizes,
)

__all__ = ["run_bench"]


def _collect(reps: int, run: Callable[[], float]) -> list[float]:
    values = []
    for _ in range(reps):
        gc.collect()
        values.append(run())
    return values


def _in_trio(fn: Callable[..., Any], *args: Any) -> Callable[[], float]:
    """One measurement in a fresh ``trio.run``: ``fn(*args)`` returns its elapsed seconds."""
    return lambda: float(trio.run(fn, *args))


def _in_asyncio(compare: ModuleType, fn: Callable[..., Any], *args: Any) -> Callable[[], float]:
    """One measurement in a fresh asyncio event loop."""
    return lambda: float(compare.run_async(fn, *args))


def _record(scenario: str, impl: str, n: int, unit: str, values: Sequence[float]) -> Record:
    return Record(scenario, impl, n, unit, min(values), statistics.median(values), len(values))


def run_bench(
    modules: Mapping[str, ModuleType],
    sizes: Sizes,
    *,
    only: Iterable[str] | None = None,
    progress: TextIO | None = None,
) -> BenchRun:
    """Run the scenarios (all, or ``only`` these), alternating implementations per repetition."""
    kernel_mod, agents_mod = modules["bench_kernel"], modules["bench_agents"]
    defs_mod, compare = modules["bench_definitions"], modules["bench_compare"]
    wanted = set(only) if only else set(SCENARIOS)
    autogen = bool(compare.autogen_available())
    result = BenchRun(
        versions={
            "python": platform.python_version(),
            "platform": platform.platform(),
            "subagents": __version__,
            "trio": trio.__version__,
            "autogen-core": compare.autogen_version() if autogen else None,
        }
    )

    def say(line: str) -> None:
        if progress is not None:
            print(line, file=progress, flush=True)

    if not autogen and wanted & set(COMPARED):
        result.notes.append(
            "autogen: skipped (autogen-core is not installed; pip install 'subagents[bench]')"
        )

    fan_k = sizes.kernel["fan_out_actors"]
    for name, unit, n, raw, ours in kernel_mod.scenarios(sizes.kernel):
        if name not in wanted:
            continue
        say(f"  {name} (n={n:,}) ...")
        impls: list[tuple[str, Callable[[], float]]] = [
            ("trio", _in_trio(raw, n)),
            ("subagents", _in_trio(ours, n)),
        ]
        if name == "request_reply":
            impls.append(("asyncio", _in_asyncio(compare, compare.asyncio_request_reply, n)))
            if autogen:
                impls.append(("autogen", _in_asyncio(compare, compare.autogen_request_reply, n)))
        elif name == "fan_out":
            impls.append(("asyncio", _in_asyncio(compare, compare.asyncio_fan_out, n, fan_k)))
            if autogen:
                impls.append(("autogen", _in_asyncio(compare, compare.autogen_fan_out, n, fan_k)))
        times: dict[str, list[float]] = {impl: [] for impl, _ in impls}
        for _ in range(sizes.reps):
            for impl, run in impls:
                gc.collect()
                times[impl].append(run())
        result.records.extend(_record(name, impl, n, unit, v) for impl, v in times.items())

    if "corpus_load" in wanted:
        corpus: Path = defs_mod.CORPUS
        if corpus.is_dir():
            say("  corpus_load ...")
            defs_mod.load_once(corpus)  # warm-up
            values = _collect(sizes.corpus_reps, lambda: float(defs_mod.load_once(corpus)[0]))
            agents = defs_mod.load_once(corpus)[1]
            result.records.append(_record("corpus_load", "subagents", agents, "s", values))
        else:
            result.notes.append(f"corpus_load: skipped (corpus not found: {corpus})")

    turns = int(agents_mod.TURNS)
    if "agent_turns" in wanted:
        n = sizes.turns_agents
        say(f"  agent_turns ({n:,} agents x {turns} turns) ...")
        values = _collect(sizes.agent_reps, lambda: float(trio.run(agents_mod.run_agents, n, 0.0)))
        result.records.append(_record("agent_turns", "subagents", n * turns, "s", values))

    ideal = turns * sizes.latency
    for agents in (100, 1_000, 10_000):
        name = f"efficiency_{agents}"
        if name not in wanted:
            continue
        if agents not in sizes.efficiency:
            result.notes.append(f"{name}: skipped in --quick (run without --quick for it)")
            continue
        count = max(1, agents // sizes.efficiency_divisor)
        say(f"  {name} ({count:,} agents x {turns} turns of {sizes.latency * 1000:g} ms) ...")
        # raw Trio tasks making the same waits as the agents (through the scripted
        # provider's SharedTimer): plain trio.sleep is slower at 10,000 tasks (about 5x ideal)
        sleepers = functools.partial(agents_mod.raw_sleepers, shared=True)
        raw_v: list[float] = []
        ours_v: list[float] = []
        for _ in range(sizes.agent_reps):
            gc.collect()
            raw_v.append(_in_trio(sleepers, count, sizes.latency)() / ideal)
            gc.collect()
            ours_v.append(_in_trio(agents_mod.run_agents, count, sizes.latency)() / ideal)
        result.records.append(_record(name, "trio", count, "x ideal", raw_v))
        result.records.append(_record(name, "subagents", count, "x ideal", ours_v))

    for name, enabled in (("transcripts_on", True), ("transcripts_off", False)):
        if name not in wanted:
            continue
        n = sizes.transcripts_agents
        say(f"  {name} ({n:,} agents x {turns} turns, runtime) ...")

        def once(enabled: bool = enabled, n: int = n) -> float:
            with tempfile.TemporaryDirectory(prefix="subagents-bench-") as tmp:
                root = Path(tmp)
                return float(
                    trio.run(
                        lambda: agents_mod.run_runtime_agents(n, transcripts=enabled, root=root)
                    )
                )

        values = _collect(sizes.agent_reps, once)
        result.records.append(_record(name, "subagents", n * turns, "s", values))

    if "function_tool_call" in wanted:
        # A function tool through the registry (validate, call, encode the result) against
        # awaiting its function directly in Trio, alternating within each repetition.
        n = sizes.function_calls
        say(f"  function_tool_call ({n:,} calls) ...")
        direct_v: list[float] = []
        tool_v: list[float] = []
        for _ in range(sizes.reps):
            gc.collect()
            direct_v.append(_in_trio(agents_mod.direct_function_calls, n)())
            gc.collect()
            tool_v.append(_in_trio(agents_mod.function_tool_calls, n)())
        result.records.append(_record("function_tool_call", "trio", n, "s", direct_v))
        result.records.append(_record("function_tool_call", "subagents", n, "s", tool_v))

    if wanted & set(PEER_SCENARIOS):
        # The same agent workload on the frameworks users would pick instead, each
        # measurement in its own subprocess (bench_peers.py); skipped with a note for
        # each one that is not installed (the ``peers`` extra).
        peers = modules["bench_peers"]
        records, notes = peers.run_peers(
            turn_agents=sizes.peer_turns_agents,
            efficiency=sizes.peer_efficiency,
            memory_agents=sizes.peer_memory_agents,
            reps=sizes.agent_reps,
            wanted=wanted,
            timeout=sizes.peer_timeout,
            latency=sizes.latency,
            say=say,
        )
        result.records.extend(Record(**r) for r in records)
        result.notes.extend(notes)
        if records:
            result.versions.update(peers.versions())
    return result
