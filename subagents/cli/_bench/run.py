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
import importlib.metadata
import platform
import statistics
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TextIO, final

import trio

from subagents import __version__
from subagents.cli._bench.scenarios import (
    COMPARED,
    PEER_SCENARIOS,
    SCENARIOS,
    SPLIT_SCENARIOS,
    BenchRun,
    Record,
    Sizes,
)

__all__ = ["paired_note", "run_bench"]


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


#: ``runtime_turn_cpu`` and ``runtime_agent_cpu``: the CPU of agents of ``TURNS`` turns
#: split, with that of agents of this many turns beside them, into what each turn costs
#: and what an agent costs once (its spawn, its file, its result, its log lines).
SHORT_TURNS: Final = 2


def split_agent(short: float, long: float, lengths: tuple[int, int]) -> tuple[float, float]:
    """An agent's CPU split in two, from agents of two lengths (``lengths`` turns) that
    cost ``short`` and ``long`` each: what it costs once, and what each turn costs (the
    line through the two points)."""
    few, many = lengths
    if many <= few:
        raise ValueError(f"the second length must be the longer, not {lengths}")
    per_turn = (long - short) / (many - few)
    return short - few * per_turn, per_turn


def paired_note(scenario: str, ours: Sequence[float], kernel: Sequence[float]) -> str:
    """The ratios of each repetition's two measurements, taken back to back: on a loaded
    machine steadier than the ratio of the minimums, which may come from different minutes."""
    ratios = [a / b for a, b in zip(ours, kernel, strict=True) if b > 0]
    if not ratios:
        return f"{scenario}, paired: no repetition to pair"
    return (
        f"{scenario}, paired: open_runtime / kernel in each repetition (back to back), "
        f"median {statistics.median(ratios):.2f}x, from {min(ratios):.2f}x to "
        f"{max(ratios):.2f}x over {len(ratios)}"
    )


@final
class _Scratch:
    """The run's folders for the runtime's state, one a measurement, kept until the run ends.

    Nothing is deleted between measurements. On an ext4 file system without a
    journal (the benchmark machine's), the inode allocator steps over every inode
    freed in the last minute, one at a time: 1,000 new files took 600 ms right
    after 1,000 were deleted, against 15 ms in a folder with no deletions. The
    runtime makes its transcript files with those of the whole pass (its helper
    process), and an agent waits for its file before its first turn ends, so
    deletions between repetitions slowed the next one's ``open_runtime`` (not its
    kernel agents). A user's transcripts do not follow a mass deletion; the
    measurements do not either. They keep about 8 KB of disk an agent until the run
    ends: 0.5 GB for issue 17's eleven scenarios.
    """

    def __init__(self) -> None:
        self._root = tempfile.TemporaryDirectory(prefix="subagents-bench-")

    def __enter__(self) -> _Scratch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._root.cleanup()

    def folder(self) -> Path:
        """A new empty folder of this run."""
        return Path(tempfile.mkdtemp(dir=self._root.name))


def run_bench(
    modules: Mapping[str, ModuleType],
    sizes: Sizes,
    *,
    only: Iterable[str] | None = None,
    progress: TextIO | None = None,
) -> BenchRun:
    """Run the scenarios (all, or ``only`` these), alternating implementations per repetition."""
    with _Scratch() as scratch:
        return _run_scenarios(modules, sizes, scratch, only=only, progress=progress)


def _run_scenarios(
    modules: Mapping[str, ModuleType],
    sizes: Sizes,
    scratch: _Scratch,
    *,
    only: Iterable[str] | None,
    progress: TextIO | None,
) -> BenchRun:
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
        # spawn_exit is short, and a loaded machine flipped it once (2.26x against 2x):
        # more repetitions, each side first in turn, the min of each side.
        reps = max(sizes.reps, sizes.spawn_exit_reps) if name == "spawn_exit" else sizes.reps
        for rep in range(reps):
            for impl, run in impls if rep % 2 == 0 else impls[::-1]:
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
            root = scratch.folder()
            return float(
                trio.run(lambda: agents_mod.run_runtime_agents(n, transcripts=enabled, root=root))
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

    if "mcp_call" in wanted:
        # The same add tool through the registry: on a stdio MCP server (a round trip to
        # bench/mcp_add_server.py) against a @subagents.tool function tool ("trio" column).
        n = sizes.mcp_calls
        say(f"  mcp_call ({n:,} round trips) ...")
        mcp_v: list[float] = []
        local_v: list[float] = []
        try:
            for _ in range(sizes.reps):
                gc.collect()
                local_v.append(_in_trio(agents_mod.function_tool_calls, n)())
                gc.collect()
                mcp_v.append(_in_trio(agents_mod.mcp_tool_calls, n)())
        except agents_mod.McpServerUnavailable as exc:
            result.notes.append(f"mcp_call: skipped (the MCP server did not start: {exc})")
        else:
            result.records.append(_record("mcp_call", "trio", n, "s", local_v))
            result.records.append(_record("mcp_call", "subagents", n, "s", mcp_v))
    if "board_claims" in wanted:
        # Members claiming tasks on the board actor (journal fsync'd in a temporary
        # folder) against the same walk on a trio.Lock and a dict, alternating.
        teams_mod = modules["bench_teams"]
        members, tasks = sizes.board_members, sizes.board_tasks
        say(f"  board_claims ({members:,} members, {tasks:,} tasks) ...")
        lock_v: list[float] = []
        board_v: list[float] = []
        made = tasks
        for _ in range(sizes.reps):
            gc.collect()
            lock_v.append(float(teams_mod.run_raw(members, tasks)[0]))
            gc.collect()
            seconds, made = teams_mod.run_board(members, tasks)
            board_v.append(float(seconds))
        result.records.append(_record("board_claims", "trio", made, "s", lock_v))
        result.records.append(_record("board_claims", "subagents", made, "s", board_v))

    if "team_messages" in wanted:
        # Peer messages round a ring of idle teammates through a real team (each woken,
        # reading in a scripted turn) against bounded trio channels, alternating.
        messages_mod = modules["bench_team_messages"]
        members, each = sizes.team_members, sizes.team_messages
        say(f"  team_messages ({members:,} teammates x {each} messages) ...")
        ring_v: list[float] = []
        team_v: list[float] = []
        sent = members * each
        for _ in range(sizes.agent_reps):
            gc.collect()
            ring_v.append(float(messages_mod.run_raw(members, each)[0]))
            gc.collect()
            seconds, sent = messages_mod.run_team(members, each)
            team_v.append(float(seconds))
        result.records.append(_record("team_messages", "trio", sent, "s", ring_v))
        result.records.append(_record("team_messages", "subagents", sent, "s", team_v))
    _run_runtime(agents_mod, kernel_mod, sizes, scratch, wanted, result, say)
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
    _run_jobs(modules["bench_jobs"], sizes, scratch, wanted, result, say)
    _run_jobs_ray(modules["bench_jobs_ray"], sizes, wanted, result, say)
    return result


def _in_tmp(scratch: _Scratch, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    """``fn(*args, root=<a new folder of the run>, **kwargs)`` in a fresh ``trio.run``."""
    return float(trio.run(functools.partial(fn, *args, root=scratch.folder(), **kwargs)))


def _run_runtime(
    agents_mod: ModuleType,
    kernel_mod: ModuleType,
    sizes: Sizes,
    scratch: _Scratch,
    wanted: set[str],
    result: BenchRun,
    say: Callable[[str], None],
) -> None:
    """The ``open_runtime`` path beside the kernel-agent path and raw Trio, in one run.

    ``subagents`` is ``open_runtime`` with transcripts on (the default), ``no_transcripts``
    with them off, ``kernel`` the agents as kernel actors (``agent_turns``), ``trio`` raw
    tasks making the same waits; they take turns within each repetition.
    """
    turns = int(agents_mod.TURNS)
    split = bool(wanted & set(SPLIT_SCENARIOS))
    if split or wanted & {"runtime_turns", "runtime_turns_cpu", "runtime_turns_cpu_all"}:
        n = sizes.runtime_agents
        say(f"  runtime_turns ({n:,} agents x {turns} turns, zero latency) ...")
        walls: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        # Agents of SHORT_TURNS turns beside them (split): CPU microseconds an agent.
        shorts: dict[str, list[float]] = {}
        helper: list[float] = []
        runs: list[tuple[str, Callable[[list[float], int], float]]] = [
            (
                "subagents",
                lambda cpu, length: _in_tmp(
                    scratch,
                    agents_mod.run_runtime_agents,
                    n,
                    transcripts=True,
                    cpu=cpu,
                    helper_cpu=helper if length == turns else None,
                    turns=length,
                ),
            ),
            (
                "no_transcripts",
                lambda cpu, length: _in_tmp(
                    scratch,
                    agents_mod.run_runtime_agents,
                    n,
                    transcripts=False,
                    cpu=cpu,
                    turns=length,
                ),
            ),
            (
                "kernel",
                lambda cpu, length: float(
                    trio.run(
                        functools.partial(agents_mod.run_agents, n, 0.0, cpu=cpu, turns=length)
                    )
                ),
            ),
            (
                "trio",
                lambda cpu, length: float(
                    trio.run(
                        functools.partial(agents_mod.raw_sleepers, n, 0.0, shared=False, cpu=cpu)
                    )
                ),
            ),
        ]
        for rep in range(sizes.agent_reps):
            for impl, run in runs if rep % 2 == 0 else runs[::-1]:
                gc.collect()
                cpu: list[float] = []
                walls.setdefault(impl, []).append(run(cpu, turns))
                cpus.setdefault(impl, []).append(cpu[0] * 1e6 / (n * turns))
                if split and impl != "trio":  # the same agents, shorter, right after
                    gc.collect()
                    cpu = []
                    run(cpu, SHORT_TURNS)
                    shorts.setdefault(impl, []).append(cpu[0] * 1e6 / n)
        result.notes.append(paired_note("runtime_turns_cpu", cpus["subagents"], cpus["kernel"]))
        halves: dict[str, list[tuple[float, float]]] = {
            impl: [
                split_agent(short, long * turns, (SHORT_TURNS, turns))
                for short, long in zip(values, cpus[impl], strict=True)
            ]
            for impl, values in shorts.items()
        }
        for impl, parts in halves.items():
            result.records.append(
                _record("runtime_turn_cpu", impl, n * turns, "us/turn", [p[1] for p in parts])
            )
            result.records.append(
                _record("runtime_agent_cpu", impl, n, "us/agent", [p[0] for p in parts])
            )
        if halves:
            for index, scenario in ((1, "runtime_turn_cpu"), (0, "runtime_agent_cpu")):
                result.notes.append(
                    paired_note(
                        scenario,
                        [p[index] for p in halves["subagents"]],
                        [p[index] for p in halves["kernel"]],
                    )
                )
        for impl, values in walls.items():
            result.records.append(_record("runtime_turns", impl, n * turns, "s", values))
        for impl, values in cpus.items():
            result.records.append(_record("runtime_turns_cpu", impl, n * turns, "us/turn", values))
            # The same with the transcripts' helper process counted in (it makes the files
            # and the fsync calls, out of this process: process_time does not see it).
            if impl == "subagents":
                values = [v + h * 1e6 / (n * turns) for v, h in zip(values, helper, strict=True)]
            result.records.append(
                _record("runtime_turns_cpu_all", impl, n * turns, "us/turn", values)
            )

    ideal = turns * sizes.latency
    for agents in (1_000, 10_000):
        name = f"runtime_efficiency_{agents}"
        if name not in wanted:
            continue
        if agents not in sizes.efficiency:
            result.notes.append(f"{name}: skipped in --quick (run without --quick for it)")
            continue
        count = max(1, agents // sizes.efficiency_divisor)
        say(f"  {name} ({count:,} agents x {turns} turns of {sizes.latency * 1000:g} ms) ...")
        sleepers = functools.partial(agents_mod.raw_sleepers, shared=True)
        eff: dict[str, list[float]] = {"trio": [], "kernel": [], "subagents": []}
        for _ in range(sizes.agent_reps):
            gc.collect()
            eff["trio"].append(_in_trio(sleepers, count, sizes.latency)() / ideal)
            gc.collect()
            eff["kernel"].append(_in_trio(agents_mod.run_agents, count, sizes.latency)() / ideal)
            gc.collect()
            ours = _in_tmp(
                scratch,
                agents_mod.run_runtime_agents,
                count,
                transcripts=True,
                latency=sizes.latency,
            )
            eff["subagents"].append(ours / ideal)
        for impl, values in eff.items():
            result.records.append(_record(name, impl, count, "x ideal", values))

    if "collector_10000" in wanted:
        # Issue 19's collector policy: the same 10,000 agents x 10 turns of 100 ms on the
        # kernel path and through open_runtime (transcripts on), under each ``[collector]``
        # policy; ``kernel`` / ``subagents`` alone are the interpreter's own settings.
        count = sizes.collector_agents
        say(f"  collector_10000 ({count:,} agents x {turns} turns, each collector policy) ...")
        policies = {"default": "", "relaxed": "+relaxed", "freeze": "+freeze"}
        col: dict[str, list[float]] = {}
        for _ in range(sizes.agent_reps):
            for policy, suffix in policies.items():
                gc.collect()
                kernel_run = functools.partial(
                    agents_mod.run_agents, count, sizes.latency, collector=policy
                )
                col.setdefault(f"kernel{suffix}", []).append(float(trio.run(kernel_run)) / ideal)
                gc.collect()
                ours = _in_tmp(
                    scratch,
                    agents_mod.run_runtime_agents,
                    count,
                    transcripts=True,
                    latency=sizes.latency,
                    collector=policy,
                )
                col.setdefault(f"subagents{suffix}", []).append(ours / ideal)
        for impl, values in col.items():
            result.records.append(_record("collector_10000", impl, count, "x ideal", values))

    if "runtime_idle_memory" in wanted:
        n = sizes.runtime_idle_agents
        say(f"  runtime_idle_memory ({n:,} idle agents) ...")
        mem: dict[str, list[float]] = {"trio": [], "kernel": [], "subagents": []}
        for _ in range(sizes.reps):
            gc.collect()
            mem["trio"].append(float(trio.run(kernel_mod.raw_idle_memory, n)))
            gc.collect()
            mem["kernel"].append(float(trio.run(kernel_mod.kernel_idle_memory, n)))
            gc.collect()
            mem["subagents"].append(_in_tmp(scratch, agents_mod.runtime_idle_memory, n))
        for impl, values in mem.items():
            result.records.append(_record("runtime_idle_memory", impl, n, "bytes/actor", values))


def _run_jobs(
    jobs_mod: ModuleType,
    sizes: Sizes,
    scratch: _Scratch,
    wanted: set[str],
    result: BenchRun,
    say: Callable[[str], None],
) -> None:
    """Agent jobs on the local backend: the job state's overhead, and 10,000 rows at once.

    ``jobs_overhead`` is ``subagents`` (rows through ``run_job``) against ``direct`` (the
    same rows through ``run_row`` with the same concurrency, no job state), taking turns;
    ``jobs_local_10000`` is ``local``, elapsed / ideal with 100 ms per model call.
    """
    turns = int(jobs_mod.TURNS)
    if "jobs_overhead" in wanted:
        rows = max(1, sizes.jobs_overhead_rows // sizes.efficiency_divisor)
        concurrency = int(jobs_mod.OVERHEAD_CONCURRENCY)
        say(f"  jobs_overhead ({rows:,} rows x {turns} turns, zero latency) ...")
        runs: list[tuple[str, Any]] = [
            ("subagents", jobs_mod.run_job_rows),
            ("direct", jobs_mod.run_direct_rows),
        ]
        times: dict[str, list[float]] = {impl: [] for impl, _ in runs}
        for rep in range(sizes.agent_reps):
            for impl, fn in runs if rep % 2 == 0 else runs[::-1]:
                gc.collect()
                times[impl].append(_in_tmp(scratch, fn, rows, latency=0.0, concurrency=concurrency))
        for impl, values in times.items():
            result.records.append(_record("jobs_overhead", impl, rows, "s", values))
    if "jobs_local_10000" in wanted:
        rows = max(1, sizes.jobs_rows // sizes.efficiency_divisor)
        ideal = turns * sizes.latency
        say(
            f"  jobs_local_10000 ({rows:,} rows x {turns} turns of {sizes.latency * 1000:g} ms) ..."
        )
        values = []
        for _ in range(sizes.agent_reps):
            gc.collect()
            elapsed = _in_tmp(
                scratch, jobs_mod.run_job_rows, rows, latency=sizes.latency, concurrency=rows
            )
            values.append(elapsed / ideal)
        result.records.append(_record("jobs_local_10000", "local", rows, "x ideal", values))


#: The Ray half of the jobs group (bench_jobs_ray.py).
JOBS_RAY_SCENARIOS = ("jobs_ray_10000", "jobs_overhead")


def _run_jobs_ray(
    jobs_mod: ModuleType,
    sizes: Sizes,
    wanted: set[str],
    result: BenchRun,
    say: Callable[[str], None],
) -> None:
    """Agent jobs on Ray with ``sizes.jobs_ray_workers`` workers against the local backend.

    ``jobs_ray_10000`` runs the same job (every row a scripted agent of 10 turns) on
    both backends, and on Ray again with its workers' ``[collector]`` policy ``freeze``
    (``ray+freeze``), taking turns, as elapsed / ideal; ``jobs_overhead``'s Ray half is
    the seconds of its rows at zero latency through ``run_job`` (``impl`` ``ray``, beside
    the local ``subagents`` one). Without Ray both are skipped
    with a note. Rows are divided by ``efficiency_divisor`` (1 but in tests).
    """
    if not wanted & set(JOBS_RAY_SCENARIOS):
        return
    missing = jobs_mod.ray_missing()
    if missing:
        result.notes.append(f"jobs_ray_10000, jobs_overhead (ray): skipped ({missing})")
        return
    workers = sizes.jobs_ray_workers
    turns = int(jobs_mod.TURNS)
    ideal = turns * sizes.latency
    with jobs_mod.ray_cluster():
        result.versions["ray"] = _version("ray")
        if "jobs_ray_10000" in wanted:
            rows = max(1, sizes.jobs_rows // sizes.efficiency_divisor)
            say(
                f"  jobs_ray_10000 ({rows:,} rows x {turns} turns of "
                f"{sizes.latency * 1000:g} ms; local, then Ray with {workers} workers) ..."
            )
            # Ray's two runs, the second with the workers' [collector] policy "freeze" (the
            # issue's "Ray plus the collector policy"), and the local one, taking turns
            runs = (("local", "default"), ("ray", "default"), ("ray+freeze", "freeze"))
            eff: dict[str, list[float]] = {impl: [] for impl, _ in runs}
            starts: list[float] = []
            for rep in range(sizes.agent_reps):
                for impl, policy in runs if rep % 2 == 0 else runs[::-1]:
                    gc.collect()
                    seconds, started = jobs_mod.measure(
                        rows,
                        backend=impl.partition("+")[0],
                        latency=sizes.latency,
                        workers=workers,
                        collector=policy,
                    )
                    eff[impl].append(seconds / ideal)
                    if impl != "local":
                        starts.append(started)
            for impl, values in eff.items():
                result.records.append(_record("jobs_ray_10000", impl, rows, "x ideal", values))
            result.notes.append(
                f"jobs_ray_10000: Ray's {workers} workers took {min(starts):.2f} s to start "
                "(included in its figure; the cluster was running before the clock)"
            )
        if "jobs_overhead" in wanted:
            rows = max(1, sizes.jobs_overhead_rows // sizes.efficiency_divisor)
            say(f"  jobs_overhead, ray ({rows:,} rows x {turns} turns, zero latency) ...")
            times: list[float] = []
            for _ in range(sizes.agent_reps):
                gc.collect()
                seconds, _started = jobs_mod.measure(
                    rows, backend="ray", latency=0.0, workers=workers
                )
                times.append(seconds)
            result.records.append(_record("jobs_overhead", "ray", rows, "s", times))


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
