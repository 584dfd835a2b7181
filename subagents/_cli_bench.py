"""``subagents bench``: every benchmark scenario, against raw Trio, asyncio and autogen-core.

The scenarios are the scripts of the repository's ``bench/`` folder
(``bench_kernel.py``, ``bench_agents.py``, ``bench_definitions.py``,
``bench_compare.py``); they stay scripts that run on their own, and this
command imports them from a checkout: ``./bench`` first, then the ``bench``
folder next to the ``subagents`` package (an editable install). They are not
part of the installed wheel, so from a plain install the command says to run
it from a checkout.

Each scenario runs in this process and this run on ``subagents`` and on raw
Trio (fastest correct idiom); request_reply and fan_out also on plain asyncio
and, when it is installed (``pip install 'subagents[bench]'``), on autogen-core.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TextIO

import trio

from subagents import __version__

__all__ = [
    "IMPLS",
    "SCENARIOS",
    "BenchRun",
    "Record",
    "Sizes",
    "add_bench_command",
    "draw_chart",
    "find_bench_dir",
    "load_scenarios",
    "run_bench",
    "table",
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
)
IMPLS: Final = ("subagents", "trio", "asyncio", "autogen")
KERNEL: Final = ("spawn_exit", "request_reply", "fan_out", "pubsub", "tree_cancel", "idle_memory")
COMPARED: Final = ("request_reply", "fan_out")
#: subagents / raw Trio must not exceed these (the kernel issue's targets).
TRIO_TARGETS: Final = {
    "spawn_exit": 2.0,
    "request_reply": 1.25,
    "fan_out": 2.0,
    "pubsub": 2.0,
    "tree_cancel": 1.5,
    "idle_memory": 1.5,
}
#: autogen / subagents (the speed-up) must reach these.
AUTOGEN_TARGETS: Final = {"request_reply": 8.0, "fan_out": 15.0}
#: Elapsed / ideal must not exceed these (efficiency_100 has no target of its own).
EFFICIENCY_TARGETS: Final = {"efficiency_1000": 1.25, "efficiency_10000": 1.5}
CORPUS_TARGET: Final = 1.0
MODULES: Final = ("bench_kernel", "bench_agents", "bench_definitions", "bench_compare")


@dataclass
class Record:
    """One scenario on one implementation: ``--json`` writes a list of these.

    Time scenarios are seconds for the whole workload of ``n`` operations,
    ``idle_memory`` bytes per actor, efficiency elapsed / ideal.
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

    @classmethod
    def full(cls, kernel_sizes: Mapping[str, int]) -> Sizes:
        return cls(kernel=dict(kernel_sizes))

    @classmethod
    def quick(cls, kernel_sizes: Mapping[str, int]) -> Sizes:
        """A tenth of the kernel sizes, fewer repetitions, no 10,000-agent efficiency."""
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
        candidates = (Path.cwd() / "bench", Path(__file__).resolve().parents[1] / "bench")
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


# -- running -------------------------------------------------------------------------------


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
    return result


# -- reporting -------------------------------------------------------------------------------


def _figure(r: Record) -> str:
    if r.unit == "s":
        return f"{r.min:.3f} s"
    if r.unit == "bytes/actor":
        return f"{r.min / 1024:.2f} KiB"
    return f"{r.min:.2f}x"


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


def table(records: Sequence[Record]) -> str:
    """A Markdown table: min per implementation, ratios, and whether each target is met."""
    by = {(r.scenario, r.impl): r for r in records}
    lines = [
        "| scenario | n | subagents | raw Trio | vs Trio | asyncio | autogen "
        "| autogen / subagents | targets met |",
        "|---|---:|---:|---:|---:|---:|---:|---:|:-:|",
    ]
    for scenario in dict.fromkeys(r.scenario for r in records):
        ours = by.get((scenario, "subagents"))
        if ours is None:
            continue
        raw, aio, ag = (by.get((scenario, impl)) for impl in ("trio", "asyncio", "autogen"))
        checks: list[str] = []
        vs_trio = vs_autogen = ""
        if raw is not None:
            ratio = ours.min / raw.min if raw.min else float("inf")
            vs_trio = f"{ratio:.2f}x"
            if scenario in TRIO_TARGETS:
                target = TRIO_TARGETS[scenario]
                checks.append(f"Trio <= {target:g}x: {_met(ratio <= target)}")
        if ag is not None:
            speedup = ag.min / ours.min if ours.min else float("inf")
            vs_autogen = f"{speedup:.1f}x"
            if scenario in AUTOGEN_TARGETS:
                target = AUTOGEN_TARGETS[scenario]
                checks.append(f"autogen >= {target:g}x: {_met(speedup >= target)}")
        if scenario in EFFICIENCY_TARGETS:
            target = EFFICIENCY_TARGETS[scenario]
            checks.append(f"<= {target:g}x ideal: {_met(ours.min <= target)}")
        if scenario == "corpus_load":
            checks.append(f"< {CORPUS_TARGET:g} s: {_met(ours.min < CORPUS_TARGET)}")
        n = f"{ours.n:,}"
        if scenario in ("agent_turns", "transcripts_on", "transcripts_off"):
            n += f" turns ({ours.n / ours.min:,.0f}/s)"
        lines.append(
            f"| {scenario} | {n} | {_figure(ours)} | {_figure(raw) if raw else ''} | {vs_trio} "
            f"| {_figure(aio) if aio else ''} | {_figure(ag) if ag else ''} | {vs_autogen} "
            f"| {'; '.join(checks)} |"
        )
    on, off = by.get(("transcripts_on", "subagents")), by.get(("transcripts_off", "subagents"))
    if on is not None and off is not None:
        lines.append("")
        lines.append(
            f"Transcripts on cost {on.min / off.min:.2f}x the time of transcripts off "
            f"({on.n / on.min:,.0f} against {off.n / off.min:,.0f} turns/s)."
        )
    return "\n".join(lines)


def matplotlib_missing() -> bool:
    """Whether ``--chart`` cannot work here."""
    return importlib.util.find_spec("matplotlib") is None


def draw_chart(records: Sequence[Record], path: Path, *, ideal: float = 1.0) -> bool:
    """Wall time and efficiency against the number of agents; False when nothing to draw.

    ``ideal`` is the seconds an agent's turns take with no overhead (10 x 100 ms).
    """
    rows = sorted((r for r in records if r.scenario.startswith("efficiency_")), key=lambda r: r.n)
    if not rows:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (wall, eff) = plt.subplots(1, 2, figsize=(10, 4))
    for impl, label, style in (
        ("subagents", "subagents agents", "o-"),
        ("trio", "raw Trio tasks, same waits", "s--"),
    ):
        mine = [r for r in rows if r.impl == impl]
        agents = [r.n for r in mine]
        wall.plot(agents, [r.min * ideal for r in mine], style, label=label)
        eff.plot(agents, [r.min for r in mine], style, label=label)
    wall.axhline(ideal, color="grey", linewidth=0.8, label="ideal")
    wall.set(
        xscale="log",
        xlabel="agents at once",
        ylabel="seconds (min over repetitions)",
        title=f"Wall time of 10 turns each (ideal {ideal:g} s)",
    )
    eff.axhline(1.0, color="grey", linewidth=0.8, label="ideal")
    targets = sorted((int(k.rsplit("_", 1)[1]), v) for k, v in EFFICIENCY_TARGETS.items())
    eff.plot([a for a, _ in targets], [v for _, v in targets], "rx", label="target")
    eff.set(xscale="log", xlabel="agents at once", ylabel="elapsed / ideal", title="Efficiency")
    for axes in (wall, eff):
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


# -- the command -------------------------------------------------------------------------------


def _fail(message: str, code: int = 2) -> int:
    print(f"subagents bench: {message}", file=sys.stderr)
    return code


def execute(
    args: argparse.Namespace, *, sizes: Sizes | None = None, out: TextIO | None = None
) -> int:
    """Run ``subagents bench`` as ``args`` says (``sizes`` overrides the workloads, for tests)."""
    out = sys.stdout if out is None else out
    only: list[str] = args.only or []
    unknown = [name for name in only if name not in SCENARIOS]
    if unknown:
        return _fail(f"unknown scenario {unknown[0]!r}; choose from {', '.join(SCENARIOS)}")
    if args.chart is not None and matplotlib_missing():
        return _fail("--chart needs matplotlib: pip install 'subagents[bench]'")
    bench_dir = find_bench_dir()
    if bench_dir is None:
        return _fail(
            "the scenario scripts (bench/bench_*.py) were not found; run it from a checkout "
            "of the subagents repository (its root folder)"
        )
    modules = load_scenarios(bench_dir)
    if sizes is None:
        kernel_sizes: Mapping[str, int] = modules["bench_kernel"].SIZES
        sizes = Sizes.quick(kernel_sizes) if args.quick else Sizes.full(kernel_sizes)
    if args.reps is not None:
        sizes = replace(sizes, reps=args.reps, agent_reps=args.reps)
    mode = "quick" if args.quick else "full"
    print(
        f"subagents bench ({mode}): Python {platform.python_version()}, trio {trio.__version__}, "
        f"{os.cpu_count()} CPUs, {sizes.reps} repetitions "
        f"({sizes.agent_reps} for agent scenarios); scenarios from {bench_dir}",
        file=out,
        flush=True,
    )
    start = time.perf_counter()
    run = run_bench(modules, sizes, only=only, progress=out)
    print(file=out)
    print(table(run.records), file=out)
    for note in run.notes:
        print(f"note: {note}", file=out)
    print(f"({time.perf_counter() - start:.1f} s)", file=out)
    if args.json is not None:
        Path(args.json).write_text(json.dumps(run.payload(), indent=2) + "\n")
        print(f"records written to {args.json}", file=out)
    if args.chart is not None:
        ideal = float(modules["bench_agents"].TURNS) * sizes.latency
        if draw_chart(run.records, Path(args.chart), ideal=ideal):
            print(f"chart written to {args.chart}", file=out)
        else:
            print("no chart: no efficiency scenario was run", file=out)
    return 0


def add_bench_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``bench`` on the ``subagents`` command's subparsers."""
    bench = commands.add_parser(
        "bench",
        help="run every benchmark on subagents, raw Trio, asyncio and autogen-core",
        description=__doc__.split("\n\n")[1] + "\n\n" + __doc__.split("\n\n")[2],
        epilog=(
            "examples:\n"
            "  subagents bench --quick\n"
            "  subagents bench --json bench.json --chart bench/chart.png\n"
            "  subagents bench --only request_reply --only fan_out\n"
            "\n"
            f"scenarios: {', '.join(SCENARIOS)}"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument(
        "--quick", action="store_true", help="smaller sizes, fewer repetitions (under a minute)"
    )
    bench.add_argument("--json", metavar="FILE", help="write {versions, records} here")
    bench.add_argument("--chart", metavar="FILE", help="draw wall time and efficiency (PNG/SVG)")
    bench.add_argument(
        "--only", action="append", metavar="SCENARIO", help="run only this scenario (repeatable)"
    )
    bench.add_argument("--reps", type=int, metavar="N", help="repetitions of every scenario")
    bench.set_defaults(func=execute)
