"""Peers: the same agent workload on ``subagents`` and on the frameworks users would pick instead.

The workload (``peers/_harness.py``): N agents at once, each 10 turns of ONE
call of a trivial ``add(a, b)`` tool, then a final text, over a fake model
with a given latency per call, written in each framework's own extension point
(``peers/peer_<framework>.py``): the OpenAI Agents SDK (a custom ``Model``),
LangGraph (a fake chat model in ``create_react_agent``), pydantic-ai
(``FunctionModel``), AutoGen AgentChat (a custom ``ChatCompletionClient`` in an
``AssistantAgent``), and ``subagents`` through ``open_runtime`` + ``rt.spawn``
(transcripts off, and on).

Every measurement is its own subprocess (a fresh interpreter, a warm-up, then
the measured run), killed when its run passes the timeout (120 s), so a
framework that hangs or crawls cannot stop the bench; such a run is recorded
as over the timeout. A framework that is not installed is skipped with a note
(``pip install 'subagents[peers]'`` installs them all); with none installed
the peer scenarios are skipped.

- ``peer_turns`` / ``peer_cpu``: zero latency; elapsed seconds (turns/s) and
  CPU microseconds (``time.process_time``) per turn.
- ``peer_efficiency_N``: N agents (100, 1,000, 10,000) with 100 ms per model
  call; elapsed / ideal, the ideal being 11 x 100 ms (10 tool turns and the
  final answer).
- ``peer_memory``: traced bytes per agent at the peak of a run with 100 ms
  per call, every agent alive with its conversation.

    python bench/bench_peers.py --quick
    python bench/bench_peers.py --json peers.json
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PEERS_DIR = Path(__file__).resolve().parent / "peers"
TURNS = 10
LATENCY = 0.1
#: A measured run longer than this is killed and reported as over it.
TIMEOUT = 120.0
#: Imports and the warm-up must end within this before the measured run starts.
START_TIMEOUT = 120.0
EXTRA = "pip install 'subagents[peers]'"
SCENARIOS = (
    "peer_turns",
    "peer_cpu",
    "peer_efficiency_100",
    "peer_efficiency_1000",
    "peer_efficiency_10000",
    "peer_memory",
)


@dataclass(frozen=True)
class Peer:
    """One implementation: its record name, script, the modules it needs, extra arguments."""

    impl: str
    script: str
    modules: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    ours: bool = False


PEERS = (
    Peer("subagents", "peer_subagents.py", ours=True),
    Peer("subagents+transcripts", "peer_subagents.py", args=("--transcripts",), ours=True),
    Peer("openai-agents", "peer_openai_agents.py", ("agents", "openai")),
    Peer("langgraph", "peer_langgraph.py", ("langgraph", "langchain_core")),
    Peer("pydantic-ai", "peer_pydantic_ai.py", ("pydantic_ai",)),
    Peer("autogen-agentchat", "peer_autogen.py", ("autogen_agentchat", "autogen_core")),
)


def missing_modules(peer: Peer) -> list[str]:
    """The modules ``peer`` needs that this interpreter cannot import."""
    absent = []
    for name in peer.modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            absent.append(name)
    return absent


def versions() -> dict[str, str | None]:
    """The installed version of each peer's distribution (None when absent)."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    for dist in (
        "openai-agents",
        "langgraph",
        "langchain-core",
        "pydantic-ai-slim",
        "autogen-agentchat",
        "autogen-core",
    ):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = None
    return found


@dataclass(frozen=True)
class Outcome:
    """What one subprocess run gave: its JSON, or over the timeout, or a failure."""

    data: dict[str, Any] | None = None
    over: float | None = None
    error: str | None = None


def run_once(
    peer: Peer,
    agents: int,
    latency: float,
    mode: str = "time",
    *,
    timeout: float = TIMEOUT,
    start_timeout: float = START_TIMEOUT,
) -> Outcome:
    """One measurement of ``peer`` in a subprocess; killed ``timeout`` s into its measured run."""
    cmd = [
        sys.executable,
        str(PEERS_DIR / peer.script),
        "--agents",
        str(agents),
        "--latency",
        repr(latency),
        "--mode",
        mode,
        *peer.args,
    ]
    with (
        tempfile.TemporaryFile("w+") as err,
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True) as proc,
    ):
        assert proc.stdout is not None
        lines: list[str] = []
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + start_timeout
            started = False
            while not started:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    proc.kill()
                    proc.wait()
                    return Outcome(error=f"did not start within {start_timeout:g} s")
                line = proc.stdout.readline()
                if not line:
                    break
                lines.append(line)
                started = line.startswith('{"started"')
        if started:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                return Outcome(over=timeout)
        else:
            proc.wait()
        lines.extend(proc.stdout.readlines())
        if proc.returncode != 0 or not lines:
            err.seek(0)
            tail = err.read().strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            return Outcome(error=tail[0][:300])
        data = json.loads(lines[-1])
        if data.get("elapsed", 0.0) > timeout:
            return Outcome(over=timeout)
        return Outcome(data=data)


def _record(scenario: str, impl: str, n: int, unit: str, values: Sequence[float]) -> dict[str, Any]:
    return {
        "scenario": scenario,
        "impl": impl,
        "n": n,
        "unit": unit,
        "min": min(values),
        "median": statistics.median(values),
        "reps": len(values),
    }


def run_peers(
    *,
    turn_agents: int,
    efficiency: Iterable[int],
    memory_agents: int,
    reps: int,
    wanted: Iterable[str] = SCENARIOS,
    timeout: float = TIMEOUT,
    latency: float = LATENCY,
    peers: Sequence[Peer] = PEERS,
    say: Callable[[str], None] = lambda line: None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Run the wanted peer scenarios; the records (``Record`` fields) and the notes.

    The implementations take turns within each repetition, so a drift of the
    machine hits them alike. Nothing runs, and one note says why, when no peer
    framework is installed.
    """
    wanted = set(wanted) & set(SCENARIOS)
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    if not wanted:
        return records, notes
    present = []
    for peer in peers:
        absent = missing_modules(peer)
        if absent:
            notes.append(
                f"peers: {peer.impl} skipped (not installed: {', '.join(absent)}; {EXTRA})"
            )
        else:
            present.append(peer)
    if not any(not p.ours for p in present):
        return records, [f"peers: skipped (no peer framework is installed; {EXTRA})"]
    load = os.getloadavg()[0]
    ideal = (TURNS + 1) * latency

    def failed(scenario: str, peer: Peer, outcome: Outcome) -> None:
        notes.append(f"{scenario}: {peer.impl} failed ({outcome.error})")

    def measured(peer: Peer, agents: int, latency: float, mode: str = "time") -> Outcome:
        """One run, said as it ends (a full run takes long: the figures come as they are made)."""
        gc.collect()
        outcome = run_once(peer, agents, latency, mode, timeout=timeout)
        if outcome.data is not None:
            figures = ", ".join(
                f"{key} {value:,.3f}" for key, value in outcome.data.items() if key != "agents"
            )
            say(f"    {peer.impl}: {figures}")
        elif outcome.over is not None:
            say(f"    {peer.impl}: over {timeout:g} s")
        else:
            say(f"    {peer.impl}: failed ({outcome.error})")
        return outcome

    if wanted & {"peer_turns", "peer_cpu"}:
        say(
            f"  peer_turns ({turn_agents:,} agents x {TURNS} turns, zero latency, "
            f"{len(present)} implementations) ..."
        )
        elapsed: dict[str, list[float]] = {p.impl: [] for p in present}
        cpu: dict[str, list[float]] = {p.impl: [] for p in present}
        for _ in range(reps):
            for peer in present:
                outcome = measured(peer, turn_agents, 0.0)
                if outcome.data is not None:
                    elapsed[peer.impl].append(outcome.data["elapsed"])
                    cpu[peer.impl].append(outcome.data["cpu"] * 1e6 / (turn_agents * TURNS))
                elif outcome.over is not None:
                    notes.append(f"peer_turns: {peer.impl} over {timeout:g} s")
                else:
                    failed("peer_turns", peer, outcome)
        for peer in present:
            if elapsed[peer.impl] and "peer_turns" in wanted:
                records.append(
                    _record("peer_turns", peer.impl, turn_agents * TURNS, "s", elapsed[peer.impl])
                )
            if cpu[peer.impl] and "peer_cpu" in wanted:
                records.append(
                    _record("peer_cpu", peer.impl, turn_agents * TURNS, "us/turn", cpu[peer.impl])
                )

    for agents in (100, 1_000, 10_000):
        name = f"peer_efficiency_{agents}"
        if name not in wanted:
            continue
        if agents not in efficiency:
            notes.append(f"{name}: skipped in --quick (run without --quick for it)")
            continue
        runs = 1 if agents >= 10_000 else reps
        say(
            f"  {name} ({agents:,} agents x {TURNS} turns of {latency * 1000:g} ms, "
            f"{runs} run(s) each) ..."
        )
        values: dict[str, list[float]] = {p.impl: [] for p in present}
        over: set[str] = set()
        for _ in range(runs):
            for peer in present:
                if peer.impl in over:
                    continue
                outcome = measured(peer, agents, latency)
                if outcome.data is not None:
                    values[peer.impl].append(outcome.data["elapsed"] / ideal)
                elif outcome.over is not None:
                    over.add(peer.impl)
                else:
                    failed(name, peer, outcome)
        for peer in present:
            if peer.impl in over:
                records.append(_record(name, peer.impl, agents, "over s", [timeout]))
                notes.append(f"{name}: {peer.impl} had not finished after {timeout:g} s")
            elif values[peer.impl]:
                records.append(_record(name, peer.impl, agents, "x ideal", values[peer.impl]))

    if "peer_memory" in wanted:
        say(f"  peer_memory ({memory_agents:,} agents, {latency * 1000:g} ms per call, traced) ...")
        for peer in present:
            outcome = measured(peer, memory_agents, latency, "memory")
            if outcome.data is not None:
                records.append(
                    _record(
                        "peer_memory",
                        peer.impl,
                        memory_agents,
                        "bytes/agent",
                        [outcome.data["bytes_per_agent"]],
                    )
                )
            elif outcome.over is not None:
                notes.append(f"peer_memory: {peer.impl} over {timeout:g} s")
            else:
                failed("peer_memory", peer, outcome)
    notes.append(
        f"peers: load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
        f"({os.cpu_count()} CPUs)"
    )
    return records, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="50 agents, efficiency at 100 only, 1 repetition"
    )
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 3, quick 1)")
    parser.add_argument("--only", action="append", choices=SCENARIOS, help="repeatable")
    parser.add_argument("--json", type=Path, default=None, help="write the records here")
    args = parser.parse_args(argv)
    reps = args.reps or (1 if args.quick else 3)
    print(f"Python {platform.python_version()}, {reps} repetitions; {versions()}", flush=True)
    records, notes = run_peers(
        turn_agents=50 if args.quick else 1_000,
        efficiency=(100,) if args.quick else (100, 1_000, 10_000),
        memory_agents=50 if args.quick else 250,
        reps=reps,
        wanted=args.only or SCENARIOS,
        say=lambda line: print(line, flush=True),
    )
    for r in records:
        print(
            f"{r['scenario']:<22} {r['impl']:<22} n={r['n']:>7,}  min {r['min']:12.3f} "
            f"median {r['median']:12.3f} {r['unit']}"
        )
    for note in notes:
        print(f"note: {note}")
    if args.json is not None:
        payload = {"python": platform.python_version(), "versions": versions(), "records": records}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
