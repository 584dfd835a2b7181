"""What a ``subagents bench`` run is made of, and where its scenario scripts are found.

The names of the scenarios and implementations, the workloads of a run
(:class:`Sizes`), what it measured (:class:`Record`, :class:`BenchRun`, the
``--json`` document), and the import of the scenario scripts from a checkout's
``bench/`` folder, which is not part of the installed wheel.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

__all__ = [
    "IMPLS",
    "PEER_SCENARIOS",
    "SCENARIOS",
    "SPLIT_SCENARIOS",
    "BenchRun",
    "Record",
    "Sizes",
    "find_bench_dir",
    "load_scenarios",
]

#: Every scenario ``--json`` may name, in the order they run.
SCENARIOS: Final = (
    "spawn_exit",
    "request_reply",
    "fan_out",
    "pubsub",
    "tree_cancel",
    "idle_memory",
    "corpus_load",
    "agent_turns",
    "efficiency_100",
    "efficiency_1000",
    "efficiency_10000",
    "transcripts_on",
    "transcripts_off",
    "function_tool_call",
    "mcp_call",
    "board_claims",
    "team_messages",
    "runtime_turns",
    "runtime_turns_cpu",
    "runtime_turns_cpu_all",
    "runtime_turn_cpu",
    "runtime_agent_cpu",
    "runtime_efficiency_1000",
    "runtime_efficiency_10000",
    "runtime_idle_memory",
    "peer_turns",
    "peer_cpu",
    "peer_efficiency_100",
    "peer_efficiency_1000",
    "peer_efficiency_10000",
    "peer_memory",
    "collector_10000",
    "jobs_overhead",
    "jobs_local_10000",
    "jobs_ray_10000",
)
#: ``subagents`` alone is the kernel (kernel scenarios) or ``open_runtime`` with transcripts
#: on (runtime_*), ``no_transcripts`` open_runtime with them off, ``kernel`` the kernel-agent
#: path (``agent_behavior`` under ``open_supervisor``) in a runtime_* scenario; ``local`` and
#: ``ray`` are the job backends of the jobs scenarios.
IMPLS: Final = (
    "subagents",
    "trio",
    "asyncio",
    "autogen",
    "kernel",
    "no_transcripts",
    "subagents+transcripts",
    "openai-agents",
    "langgraph",
    "pydantic-ai",
    "autogen-agentchat",
    "kernel+relaxed",
    "kernel+freeze",
    "subagents+relaxed",
    "subagents+freeze",
    "direct",
    "local",
    "ray",
    "ray+freeze",
)
COMPARED: Final = ("request_reply", "fan_out")
#: runtime_turns's CPU split into a turn's and an agent's once (runtime_turns writes them
#: when either is asked for: it runs every path's agents at two lengths).
SPLIT_SCENARIOS: Final = ("runtime_turn_cpu", "runtime_agent_cpu")
#: The scenarios of ``bench_peers.py``: the same agent workload on the frameworks users would
#: pick instead (the ``peers`` extra), each run in a subprocess.
PEER_SCENARIOS: Final = (
    "peer_turns",
    "peer_cpu",
    "peer_efficiency_100",
    "peer_efficiency_1000",
    "peer_efficiency_10000",
    "peer_memory",
)
MODULES: Final = (
    "bench_kernel",
    "bench_agents",
    "bench_definitions",
    "bench_compare",
    "bench_teams",
    "bench_team_messages",
    "bench_peers",
    "bench_jobs",
    "bench_jobs_ray",
)


@dataclass
class Record:
    """One scenario on one implementation: ``--json`` writes a list of these.

    Time scenarios are seconds for the whole workload of ``n`` operations,
    ``idle_memory`` bytes per actor, efficiency elapsed / ideal;
    ``runtime_turns_cpu`` (written by runtime_turns) CPU microseconds per turn of
    this process, ``runtime_turns_cpu_all`` with the transcripts' helper process too;
    ``runtime_turn_cpu`` and ``runtime_agent_cpu`` (also written by runtime_turns) that
    CPU split into what each turn costs and what an agent costs once (microseconds an
    agent), from agents of two lengths.
    ``idle_memory`` bytes per actor, efficiency elapsed / ideal; ``peer_cpu`` CPU
    microseconds per turn, ``peer_memory`` bytes per agent, and a peer run killed at
    the timeout has the unit ``over s`` (its min is the timeout).
    """

    scenario: str
    impl: str
    n: int
    unit: str
    min: float
    median: float
    reps: int


@dataclass(frozen=True)
class Sizes:
    """The workloads of one run: the full figures, ``quick()``, or tiny ones in tests."""

    kernel: Mapping[str, int]
    reps: int = 5
    agent_reps: int = 3
    corpus_reps: int = 20
    turns_agents: int = 1_000
    efficiency: tuple[int, ...] = (100, 1_000, 10_000)
    latency: float = 0.1
    #: Agents per efficiency run are 100, 1,000, 10,000 divided by this (1 but in tests).
    efficiency_divisor: int = 1
    transcripts_agents: int = 200
    #: Calls of a function tool (and of its function, directly) per ``function_tool_call`` run.
    function_calls: int = 100_000
    #: Round trips to a stdio MCP server (and calls of a function tool) per ``mcp_call`` run.
    mcp_calls: int = 5_000
    #: Members contending, and tasks they claim, per ``board_claims`` run.
    board_members: int = 100
    board_tasks: int = 10_000
    #: Teammates, and messages each sends round the ring, per ``team_messages`` run.
    team_members: int = 100
    team_messages: int = 10
    #: Agents of ``runtime_turns`` (10 turns each, zero latency, through ``open_runtime``).
    runtime_agents: int = 1_000
    #: Idle agents spawned through ``open_runtime`` per ``runtime_idle_memory`` run.
    runtime_idle_agents: int = 1_000
    #: Repetitions of ``spawn_exit`` (short and noisy: more of them, the min of each side).
    spawn_exit_reps: int = 15
    #: Agents of ``peer_turns`` / ``peer_cpu`` (x 10 turns, zero latency), on every peer.
    peer_turns_agents: int = 1_000
    #: Agents of the ``peer_efficiency_N`` runs (100 ms per model call).
    peer_efficiency: tuple[int, ...] = (100, 1_000, 10_000)
    #: Agents of ``peer_memory``.
    peer_memory_agents: int = 250
    #: Seconds a peer's measured run may take before it is killed and reported as over.
    peer_timeout: float = 120.0
    #: Agents of ``collector_10000`` (x 10 turns of ``latency``), under each collector policy.
    collector_agents: int = 10_000
    #: Rows of ``jobs_overhead`` (zero latency, through run_job and directly), and of
    #: ``jobs_local_10000`` (100 ms per model call); both divided by ``efficiency_divisor``.
    jobs_overhead_rows: int = 2_000
    jobs_rows: int = 10_000
    #: Ray workers of ``jobs_ray_10000`` (``jobs_rows`` rows) and of ``jobs_overhead``'s Ray
    #: half (``jobs_overhead_rows`` rows).
    jobs_ray_workers: int = 2

    @classmethod
    def full(cls, kernel_sizes: Mapping[str, int]) -> Sizes:
        return cls(kernel=dict(kernel_sizes))

    @classmethod
    def quick(cls, kernel_sizes: Mapping[str, int]) -> Sizes:
        """A tenth of the kernel sizes, fewer repetitions, no 10,000-agent efficiency.

        The peers run 50 agents for their turns, and their efficiency at 100 agents only.
        """
        kernel = {k: max(1, v // 10) for k, v in kernel_sizes.items()}
        kernel["fan_out_actors"] = 100
        kernel["pubsub_subscribers"] = 100
        return cls(
            kernel=kernel,
            reps=3,
            agent_reps=1,
            corpus_reps=5,
            turns_agents=200,
            efficiency=(100, 1_000),
            transcripts_agents=100,
            function_calls=10_000,
            mcp_calls=1_000,
            board_tasks=2_000,
            team_members=20,
            runtime_agents=1_000,
            runtime_idle_agents=200,
            spawn_exit_reps=9,
            peer_turns_agents=50,
            peer_efficiency=(100,),
            peer_memory_agents=50,
            collector_agents=2_000,
            jobs_overhead_rows=500,
            jobs_rows=1_000,
        )


@dataclass
class BenchRun:
    """What one run measured, and what it skipped (with why)."""

    records: list[Record] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    versions: dict[str, str | None] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {"versions": self.versions, "records": [asdict(r) for r in self.records]}


# -- finding the scenario scripts ------------------------------------------------------------


def find_bench_dir(candidates: Iterable[Path] | None = None) -> Path | None:
    """The ``bench`` folder of a checkout: ``./bench``, then the one beside the package."""
    if candidates is None:
        candidates = (Path.cwd() / "bench", Path(__file__).resolve().parents[3] / "bench")
    for folder in candidates:
        if all((folder / f"{name}.py").is_file() for name in MODULES):
            return folder
    return None


def load_scenarios(bench_dir: Path) -> dict[str, ModuleType]:
    """Import the scenario scripts of ``bench_dir`` (once per process and folder)."""
    modules: dict[str, ModuleType] = {}
    for name in MODULES:
        path = (bench_dir / f"{name}.py").resolve()
        key = f"_subagents_bench_{name}"
        loaded = sys.modules.get(key)
        if loaded is not None and getattr(loaded, "__file__", None) == str(path):
            modules[name] = loaded
            continue
        spec = importlib.util.spec_from_file_location(key, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # dataclasses look their module up while it loads
        spec.loader.exec_module(module)
        modules[name] = module
    return modules
