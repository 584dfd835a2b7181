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
The peer_* scenarios run one agent workload on ``open_runtime`` and on the agent
frameworks of the ``peers`` extra (``pip install 'subagents[peers]'``), each in
a subprocess; a framework that is not installed is skipped with a note.

This module is the command: its options, its checks and what it prints. The
run itself is :mod:`subagents.cli._bench.run`, the table and the chart
:mod:`subagents.cli._bench.report`, and the scenario names, workloads, records
and the finding of the scripts :mod:`subagents.cli._bench.scenarios`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import trio

from subagents.cli._bench.report import draw_chart, matplotlib_missing, table
from subagents.cli._bench.run import run_bench
from subagents.cli._bench.scenarios import SCENARIOS, Sizes, find_bench_dir, load_scenarios

__all__ = ["add_bench_command", "execute"]


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
