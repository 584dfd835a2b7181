"""Agent-loop benchmarks: full agent turns on the scripted provider, as kernel actors.

Every agent is a kernel actor (``agent_behavior`` under ``open_supervisor``)
running the real loop: a model call to the scripted provider, one tool call
through a ``ToolSelection`` (validation, filter re-check, dispatch), the
result appended, repeated. Each agent makes 10 turns: 9 calls to a read-only
``Echo`` tool, then ``complete_task`` (validated with ``jsonschema``).

- ``turns``: agent turns per second at zero model latency (1,000 agents x 10
  turns), without and with a bus subscriber (the cost of building events).
- ``efficiency``: 10 turns of 100 ms simulated model latency each, for 1,000
  and 10,000 agents at once. The ideal is 1.0 s (10 x 100 ms); the figure is
  elapsed / ideal (targets: 1.25x at 1,000 agents, 1.5x at 10,000). The same
  waits on raw Trio tasks are measured too (through the scripted provider's
  ``SharedTimer``, and with one ``trio.sleep`` each), and the agents once more
  with the cycle collector off, so the loop's own share and CPython's show.

    python bench/bench_agents.py            # full sizes, 3 repetitions
    python bench/bench_agents.py --quick    # a tenth of the sizes, 1 repetition
    python bench/bench_agents.py --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import trio
import trio.testing

from subagents import testing
from subagents.actors import SupervisorConfig, open_supervisor
from subagents.agents import AgentDefinition
from subagents.runtime import (
    COMPLETE_TASK,
    AgentResult,
    AgentSpec,
    CollectorConfig,
    CollectorGuard,
    Conversation,
    Limits,
    LimitsConfig,
    Message,
    Origin,
    RuntimeConfig,
    ScriptedProvider,
    SharedTimer,
    TerminateReason,
    TranscriptsConfig,
    agent_behavior,
    open_runtime,
)
from subagents.tools import (
    McpServerConfig,
    ToolContext,
    ToolPolicy,
    ToolRegistry,
    filter_tools,
    open_mcp_servers,
    tool,
)

TURNS = testing.ECHO_WORKER_TURNS
LATENCY = 0.1
IDEAL = TURNS * LATENCY
SIZES = {"turns": 1_000, "efficiency_small": 1_000, "efficiency_large": 10_000}
TARGETS = {"efficiency_small": 1.25, "efficiency_large": 1.5}
TIMEOUT = 600.0


@dataclass
class Record:
    """One measurement, as ``--json`` writes it."""

    scenario: str
    agents: int
    turns: int
    seconds_min: float
    seconds_median: float
    figure: float
    unit: str
    reps: int


def make_spec(latency: float, turns: int = TURNS) -> AgentSpec:
    """One spec shared by every agent of ``turns`` turns: tool specs and complete_task
    are built once."""
    definition = AgentDefinition(
        name=testing.ECHO_WORKER,
        description="Calls Echo nine times, then complete_task.",
        system_prompt="You are a benchmark agent.",
        tools=("Echo", COMPLETE_TASK),
    )
    provider = testing.echo_worker_provider(latency=latency, turns=turns)
    tools = filter_tools([testing.EchoTool()], ToolPolicy(source="project", depth=1, max_depth=1))
    return AgentSpec(
        definition=definition,
        provider=provider,
        model="claude-bench",
        system_prompt=definition.system_prompt,
        tools=tools,
        limits=Limits(max_turns=turns + 1, max_time_seconds=TIMEOUT, grace_period_seconds=1.0),
        workspace_root=Path.cwd(),
    )


async def run_agents(
    agents: int,
    latency: float,
    *,
    subscribe: bool = False,
    collector: str = "default",
    cpu: list[float] | None = None,
    turns: int = TURNS,
    window: Callable[[bool], object] | None = None,
) -> float:
    """Run ``agents`` agents of ``turns`` turns to completion as kernel actors; the elapsed
    wall-clock seconds.

    ``collector`` is ``default``, ``off`` to show the cycle collector's share, or a
    ``[collector]`` policy (``relaxed``, ``freeze``, see ``CollectorConfig``):
    with 10,000 agents alive, each full collection walks every agent's tasks,
    frames and scopes. ``cpu``, when given, gets the process's CPU seconds of the
    same interval (``time.process_time``); ``window``, when given, is called with ``True``
    as that interval opens and ``False`` as it closes (``bench_samples.py`` samples it).
    """
    spec = make_spec(latency, turns)
    done = trio.Event()
    finished = 0
    failures: list[AgentResult] = []

    def on_result(result: AgentResult) -> None:
        nonlocal finished
        finished += 1
        if result.terminate_reason is not TerminateReason.GOAL or result.turns != turns:
            failures.append(result)
        if finished == agents:
            done.set()

    config = SupervisorConfig(max_threads=agents, max_depth=0, close_grace_period=5.0)
    async with open_supervisor(config) as sup:
        subscription = sup.subscribe(capacity=64) if subscribe else None
        if collector == "off":
            gc.disable()
        guard = CollectorGuard(
            CollectorConfig(policy=collector if collector != "off" else "default")
        ).__enter__()
        if window is not None:
            window(True)
        start = time.perf_counter()
        cpu_start = time.process_time()
        try:
            for _ in range(agents):
                conversation = Conversation([Message.user("Ping nine times.", origin=Origin.TASK)])
                await sup.spawn(
                    agent_behavior(spec, conversation, on_result=on_result),
                    label=testing.ECHO_WORKER,
                    auto_close=True,
                )
                guard.spawned()
            with trio.fail_after(TIMEOUT):
                await done.wait()
            elapsed = time.perf_counter() - start
            if cpu is not None:
                cpu.append(time.process_time() - cpu_start)
            if window is not None:
                window(False)
        finally:
            gc.enable()
            guard.__exit__(None, None, None)
        if subscription is not None:
            subscription.close()
    if failures:
        raise SystemExit(f"{len(failures)} agents did not complete: {failures[0].describe()}")
    return elapsed


async def raw_sleepers(
    agents: int, latency: float, *, shared: bool, cpu: list[float] | None = None
) -> float:
    """The same waits on plain Trio tasks: ``TURNS`` waits of ``latency`` each,
    through the scripted provider's :class:`SharedTimer` or ``trio.sleep``
    (``cpu``, when given, gets the CPU seconds)."""
    wait = SharedTimer().sleep if shared else trio.sleep

    async def sleeper() -> None:
        for _ in range(TURNS):
            await wait(latency)

    start = time.perf_counter()
    cpu_start = time.process_time()
    async with trio.open_nursery() as nursery:
        for _ in range(agents):
            nursery.start_soon(sleeper)
    if cpu is not None:
        cpu.append(time.process_time() - cpu_start)
    return time.perf_counter() - start


def _runtime_world(
    root: Path, agents: int, *, transcripts: bool, collector: str | None = None
) -> tuple[RuntimeConfig, Path, Path]:
    """The bench agent type in ``root/project``, and a configuration for ``agents`` agents
    (``collector``: a ``[collector]`` policy; ``None``, the runtime's default)."""
    project, home, state = testing.echo_worker_project(root)
    (project / ".claude" / "agents" / "bench-idle.md").write_text(
        "---\nname: bench-idle\ndescription: Answers, then waits for input.\n"
        "tools: Echo\n---\n\nYou are a benchmark agent.\n"
    )
    config = RuntimeConfig(
        state_dir=state,
        limits=LimitsConfig(max_threads=agents, max_time_seconds=TIMEOUT),
        transcripts=TranscriptsConfig(enabled=transcripts),
        collector=(
            CollectorConfig() if collector is None else CollectorConfig(policy=collector)  # type: ignore[arg-type]
        ),
    )
    return config, project, home


async def run_runtime_agents(
    agents: int,
    *,
    transcripts: bool,
    root: Path,
    latency: float = 0.0,
    cpu: list[float] | None = None,
    collector: str | None = None,
    helper_cpu: list[float] | None = None,
    turns: int = TURNS,
    window: Callable[[bool], object] | None = None,
) -> float:
    """Run ``agents`` agents of ``turns`` turns through ``open_runtime``.

    The runtime is the one people embed (agent types from ``root/project``,
    hooks, logs), with its transcripts on or off and its state in
    ``root/state``, each model call taking ``latency`` seconds; the elapsed
    seconds from the first spawn until every agent is final (``cpu``, when
    given, gets the CPU seconds of the same interval, and ``helper_cpu`` those
    of the transcripts' helper process, which started within it: 0 without
    one). This is ``subagents bench``'s transcripts_on / transcripts_off,
    runtime_turns and runtime_efficiency_N; ``collector`` is the runtime's
    ``[collector]`` policy (``None``: its default, ``relaxed``, as a user gets it);
    ``window`` is called as the measured interval opens and closes, as in :func:`run_agents`.
    """
    config, project, home = _runtime_world(
        root, agents, transcripts=transcripts, collector=collector
    )
    provider = testing.echo_worker_provider(latency=latency, turns=turns)
    async with open_runtime(
        config, cwd=project, home=home, env={}, provider=provider, tools=[testing.EchoTool()]
    ) as rt:
        if window is not None:
            window(True)
        start = time.perf_counter()
        cpu_start = time.process_time()
        ids = [
            (await rt.spawn(testing.ECHO_WORKER, "Ping nine times.")).agent_id
            for _ in range(agents)
        ]
        await rt.wait(ids, timeout=TIMEOUT, mode="all")
        elapsed = time.perf_counter() - start
        if cpu is not None:
            cpu.append(time.process_time() - cpu_start)
        if window is not None:
            window(False)
        if helper_cpu is not None:
            helper_cpu.append(process_cpu(rt.services.flusher.helper_pid))
        results = [rt.result(agent_id) for agent_id in ids]
    bad = [
        r
        for r in results
        if r is None or r.terminate_reason is not TerminateReason.GOAL or r.turns != turns
    ]
    if bad:
        first = bad[0]
        detail = "no result" if first is None else first.describe()
        raise SystemExit(f"{len(bad)} agents did not complete: {detail}")
    return elapsed


def process_cpu(pid: int | None) -> float:
    """The CPU seconds (user and system) process ``pid`` has used so far; 0 for ``None``
    or where ``/proc`` cannot tell (10 ms resolution)."""
    if pid is None:
        return 0.0
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def runtime_idle_memory(agents: int, *, root: Path) -> float:
    """Bytes per idle agent spawned through ``open_runtime`` (transcripts on), with its
    conversation: ``agents`` agents answer at once and stay open, idle, waiting for input.

    Measured with ``tracemalloc`` from before the first spawn until every agent
    is idle and the runtime's tasks are blocked (the runtime's own fixed
    allocations, before the first spawn, are left out).
    """
    config, project, home = _runtime_world(root, agents, transcripts=True)
    provider = ScriptedProvider(lambda request: testing.say("done"))
    async with open_runtime(
        config, cwd=project, home=home, env={}, provider=provider, tools=[testing.EchoTool()]
    ) as rt:
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            ids = [(await rt.spawn("bench-idle", "Say done.")).agent_id for _ in range(agents)]
            await rt.wait(ids, timeout=TIMEOUT, mode="all")
            await trio.testing.wait_all_tasks_blocked()
            gc.collect()
            used = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        idle = sum(
            1
            for agent_id in ids
            if (r := rt.result(agent_id)) is not None and r.terminate_reason is TerminateReason.GOAL
        )
    if idle != agents:
        raise SystemExit(f"{agents - idle} agents did not finish their run")
    return used / agents


@tool(read_only=True)
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def function_tool_calls(n: int) -> float:
    """``n`` calls of the ``add`` function tool through a registry (decode, call, encode)."""
    registry = ToolRegistry([add])
    ctx = ToolContext(agent_id="bench", depth=0, workspace_root=Path.cwd())
    arguments = {"a": 1, "b": 2}
    result = None
    start = time.perf_counter()
    for _ in range(n):
        result = await registry.call("add", arguments, ctx)
    elapsed = time.perf_counter() - start
    assert result is not None
    assert result.content == "3", result
    return elapsed


async def direct_function_calls(n: int) -> float:
    """``n`` direct awaits of the function behind ``add``: the baseline of the tool's overhead."""
    function = add.function
    value = None
    start = time.perf_counter()
    for _ in range(n):
        value = await function(a=1, b=2)
    elapsed = time.perf_counter() - start
    assert value == 3, value
    return elapsed


def measure(reps: int, run: Callable[[], Awaitable[float]]) -> list[float]:
    times = []
    for _ in range(reps):
        gc.collect()
        times.append(trio.run(run))
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes, 1 repetition")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 3)")
    parser.add_argument("--json", type=Path, default=None, help="write the records here")
    args = parser.parse_args(argv)
    scale = 10 if args.quick else 1
    reps = args.reps or (1 if args.quick else 3)
    sizes = {name: max(1, n // scale) for name, n in SIZES.items()}
    records: list[Record] = []
    print(f"Python {platform.python_version()}, trio {trio.__version__}, {reps} repetitions")

    def record(scenario: str, agents: int, times: list[float], figure: float, unit: str) -> None:
        rec = Record(
            scenario, agents, TURNS, min(times), statistics.median(times), figure, unit, reps
        )
        records.append(rec)
        print(
            f"{scenario:<26} agents={agents:>6}  min {rec.seconds_min:7.3f} s  "
            f"median {rec.seconds_median:7.3f} s  -> {figure:,.2f} {unit}"
        )

    n = sizes["turns"]
    times = measure(reps, lambda: run_agents(n, 0.0))
    record("turns", n, times, n * TURNS / min(times), "turns/s")
    times = measure(reps, lambda: run_agents(n, 0.0, subscribe=True))
    record("turns_with_subscriber", n, times, n * TURNS / min(times), "turns/s")

    failed = []
    for scenario in ("efficiency_small", "efficiency_large"):
        n = sizes[scenario]
        sleeps = measure(reps, lambda n=n: raw_sleepers(n, LATENCY, shared=False))  # type: ignore[misc]
        record(f"{scenario}_raw_trio_sleep", n, sleeps, min(sleeps) / IDEAL, "x ideal")
        raw = measure(reps, lambda n=n: raw_sleepers(n, LATENCY, shared=True))  # type: ignore[misc]
        record(f"{scenario}_raw_trio", n, raw, min(raw) / IDEAL, "x ideal")
        times = measure(reps, lambda n=n: run_agents(n, LATENCY))  # type: ignore[misc]
        ratio = min(times) / IDEAL
        record(scenario, n, times, ratio, "x ideal")
        print(
            f"{'':<26} vs raw Trio (same waits): {min(times) / min(raw):.2f}x; "
            f"target <= {TARGETS[scenario]}x ideal"
        )
        tuned = measure(reps, lambda n=n: run_agents(n, LATENCY, collector="off"))  # type: ignore[misc]
        record(f"{scenario}_gc_off", n, tuned, min(tuned) / IDEAL, "x ideal")
        if ratio > TARGETS[scenario] and not args.quick:
            failed.append(f"{scenario}: {ratio:.2f}x > {TARGETS[scenario]}x")
    if args.json is not None:
        payload: dict[str, Any] = {
            "python": platform.python_version(),
            "trio": trio.__version__,
            "records": [asdict(r) for r in records],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    for line in failed:
        print(f"MISSED TARGET {line}", file=sys.stderr)
    return 0


#: The stdio MCP server of the mcp_call scenario (its one tool is ``add``).
MCP_ADD_SERVER = Path(__file__).with_name("mcp_add_server.py")


class McpServerUnavailable(RuntimeError):
    """The mcp_call scenario's server did not start; the message says why."""


async def mcp_tool_calls(n: int) -> float:
    """``n`` calls of the ``add`` tool of a stdio MCP server through a registry, round trips.

    The server (bench/mcp_add_server.py) is started and called once before the
    clock starts, so only the calls are measured: encode, pipe to the server
    process, its answer, decode, the tool result.
    """
    config = McpServerConfig(name="bench", command=sys.executable, args=(str(MCP_ADD_SERVER),))
    result = None
    async with open_mcp_servers([config]) as servers:
        tools = await servers.tools()
        (status,) = servers.statuses()
        if tools:
            registry = ToolRegistry(tools)
            ctx = ToolContext(agent_id="bench", depth=0, workspace_root=Path.cwd())
            arguments = {"a": 1, "b": 2}
            result = await registry.call("mcp__bench__add", arguments, ctx)  # warm-up
            start = time.perf_counter()
            for _ in range(n):
                result = await registry.call("mcp__bench__add", arguments, ctx)
            elapsed = time.perf_counter() - start
    # Raised outside the servers' nursery, so the caller gets it as it is (no group).
    if result is None:
        raise McpServerUnavailable(status.error or status.status)
    assert result.content == "3", result
    return elapsed


if __name__ == "__main__":
    sys.exit(main())
