"""Cache misses per agent: the part of a turn's CPU that instruction counts leave out.

``bench_instructions.py`` counts the instructions an agent costs, and by them the
path users take costs about 2x the kernel path's. Its CPU time costs more than
that (2.4x to 3.1x in ``runtime_turns_cpu``), and the rest is system calls and
memory: an instruction that reads an object no cache holds waits for it.
``valgrind --tool=cachegrind`` simulates the caches of the machine an instruction
stream runs on and counts the misses, the same from one run to the next however
loaded the machine is. The last level it simulates is set by default to this
machine's L2 (512 KiB, 8 ways, one per core; ``/sys/devices/system/cpu/cpu0/cache``):
a miss there goes to the L3, which every tenant of the host shares, or to
memory, tens to hundreds of cycles where an L1 hit takes four.

Each path runs N agents of 10 turns in a child of its own (``bench_instructions``'
child: the same workloads, the cycle collector off unless ``--collector``), at
two sizes; the difference divided by the difference in agents is what one agent
costs, as there.

    python bench/bench_misses.py                    # 200 and 400 agents
    python bench/bench_misses.py --quick --only kernel --only subagents
    python bench/bench_misses.py --last-level 33554432 --ways 16   # the whole 32 MiB L3
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_instructions  # the paths, their workloads and their child, beside this file

#: The simulated last level, in bytes, and its ways: this machine's L2, one a core (its
#: AMD EPYC's, as ``/sys/devices/system/cpu/cpu0/cache/index2`` gives them).
LAST_LEVEL = 512 << 10
LAST_LEVEL_WAYS = 8
#: The line size of every level.
LINE = 64
#: A child simulating its caches runs about 50 times slower than natively.
CHILD_TIMEOUT = 2400.0
#: What cachegrind's summary names, and the field each count goes to.
_SUMMARY = {
    "instructions": re.compile(r"^==\d+== I\s+refs:\s+([\d,]+)", re.MULTILINE),
    "l1i_misses": re.compile(r"^==\d+== I1\s+misses:\s+([\d,]+)", re.MULTILINE),
    "l1d_misses": re.compile(r"^==\d+== D1\s+misses:\s+([\d,]+)", re.MULTILINE),
    "last_level_misses": re.compile(r"^==\d+== LL misses:\s+([\d,]+)", re.MULTILINE),
}


@dataclass(frozen=True)
class Counts:
    """One process's instructions and misses, as cachegrind summed them up."""

    instructions: int
    l1i_misses: int
    l1d_misses: int
    last_level_misses: int

    def minus(self, other: Counts) -> dict[str, int]:
        return {name: value - getattr(other, name) for name, value in asdict(self).items()}


@dataclass(frozen=True)
class PerAgent:
    """One path's counts per agent, from two runs at two sizes."""

    path: str
    small: int
    large: int
    small_counts: Counts
    large_counts: Counts
    turns: int = bench_instructions.bench_agents.TURNS

    @property
    def per_agent(self) -> dict[str, float]:
        agents = self.large - self.small
        return {
            name: value / agents
            for name, value in self.large_counts.minus(self.small_counts).items()
        }


@dataclass(frozen=True)
class Split:
    """One path's counts split in two, from agents of two lengths: each turn's, and what
    the agent costs once (its spawn, result and close), as ``bench_instructions --split``."""

    path: str
    short: PerAgent
    long: PerAgent

    @property
    def per_turn(self) -> dict[str, float]:
        return {name: parts[1] for name, parts in self._parts.items()}

    @property
    def once(self) -> dict[str, float]:
        return {name: parts[0] for name, parts in self._parts.items()}

    @property
    def _parts(self) -> dict[str, tuple[float, float]]:
        short, long = self.short.per_agent, self.long.per_agent
        lengths = (self.short.turns, self.long.turns)
        return {
            name: bench_instructions.split_agent(short[name], long[name], lengths) for name in long
        }


def split(results: Sequence[PerAgent]) -> list[Split]:
    """Pair each path's short and long runs (from :func:`measure` with two lengths)."""
    return [
        Split(path, short, long) for path, short, long in bench_instructions.pair_lengths(results)
    ]


def summary(report: str) -> Counts:
    """The counts of cachegrind's summary on stderr (one process's: children are not traced)."""
    found: dict[str, int] = {}
    for name, pattern in _SUMMARY.items():
        values = pattern.findall(report)
        if len(values) != 1:
            raise bench_instructions.CountError(
                f"cachegrind's report names no single {name}:\n{report[-2000:]}"
            )
        found[name] = int(values[0].replace(",", ""))
    return Counts(**found)


def count(
    path: str,
    agents: int,
    *,
    turns: int = bench_instructions.bench_agents.TURNS,
    last_level: int = LAST_LEVEL,
    ways: int = LAST_LEVEL_WAYS,
    collector: bool = False,
    valgrind: str | None = None,
    runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> Counts:
    """The counts of a child running ``agents`` agents of ``turns`` turns on ``path`` under
    cachegrind, its last level ``last_level`` bytes of ``ways`` ways."""
    script = Path(bench_instructions.__file__)
    child = bench_instructions.child_command(script, path, agents, turns)
    if collector:
        child.append("--collector")
    return under_cachegrind(
        child, path, agents, last_level=last_level, ways=ways, valgrind=valgrind, runner=runner
    )


def under_cachegrind(
    child: list[str],
    label: str,
    agents: int,
    *,
    last_level: int = LAST_LEVEL,
    ways: int = LAST_LEVEL_WAYS,
    valgrind: str | None = None,
    runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> Counts:
    """The counts of the ``child`` command (``label``, of ``agents`` agents) under cachegrind,
    its last level ``last_level`` bytes of ``ways`` ways (this script's and
    ``misses_without.py``'s children)."""
    valgrind = valgrind or shutil.which("valgrind")
    if valgrind is None:
        raise bench_instructions.CountError(
            f"valgrind is not on PATH: {bench_instructions.INSTALL}."
        )
    with tempfile.TemporaryDirectory(prefix="subagents-misses-") as folder:
        command = [
            valgrind,
            "--tool=cachegrind",
            "--cache-sim=yes",
            f"--LL={last_level},{ways},{LINE}",
            f"--cachegrind-out-file={Path(folder) / 'cachegrind.out'}",
            *child,
        ]
        report = bench_instructions.run_child(
            command, label, agents, "cachegrind", CHILD_TIMEOUT, runner
        )
    return summary(report)


def measure(
    paths: Sequence[str],
    small: int,
    large: int,
    *,
    jobs: int = 2,
    counter: Callable[[str, int, int], Counts],
    turns: Sequence[int] = (bench_instructions.bench_agents.TURNS,),
) -> list[PerAgent]:
    """Each path at both sizes (``jobs`` children at a time) for each length of run in
    ``turns``; its counts per agent, path by path, then length by length."""
    if not 0 < small < large:
        raise ValueError(f"the sizes must be 0 < small < large (got {small} and {large})")
    runs = [(path, n, t) for path in paths for t in turns for n in (small, large)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        counts = list(pool.map(lambda run: counter(*run), runs))
    by_run = dict(zip(runs, counts, strict=True))
    return [
        PerAgent(path, small, large, by_run[path, small, t], by_run[path, large, t], t)
        for path in paths
        for t in turns
    ]


def table(results: Sequence[PerAgent], last_level: int = LAST_LEVEL) -> str:
    """The Markdown table: per agent, each count and its ratio to the first path's."""
    base = results[0].per_agent
    first = results[0].path
    level = _size(last_level)
    lines = [
        f"| path | instructions | / {first} | L1 misses | / {first} "
        f"| misses of {level} | / {first} |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        row = result.per_agent
        l1 = row["l1i_misses"] + row["l1d_misses"]
        base_l1 = base["l1i_misses"] + base["l1d_misses"]
        lines.append(
            f"| {result.path} | {row['instructions'] / 1e6:.3f}M "
            f"| {_ratio(row['instructions'], base['instructions'])} "
            f"| {l1 / 1e3:.1f}k | {_ratio(l1, base_l1)} "
            f"| {row['last_level_misses']:,.0f} "
            f"| {_ratio(row['last_level_misses'], base['last_level_misses'])} |"
        )
    return "\n".join(lines)


def split_table(splits: Sequence[Split], last_level: int = LAST_LEVEL) -> str:
    """The Markdown table of ``--split``: instructions and last-level misses once per agent
    and per turn, each against the first path's."""
    first = splits[0]
    level = _size(last_level)
    lines = [
        f"| path | once: instructions | / {first.path} | once: misses of {level} "
        f"| / {first.path} | a turn: instructions | / {first.path} "
        f"| a turn: misses of {level} | / {first.path} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base_once, base_turn = first.once, first.per_turn
    for row in splits:
        once, turn = row.once, row.per_turn
        cells = [row.path]
        for part, base in ((once, base_once), (turn, base_turn)):
            cells += [
                f"{part['instructions'] / 1e3:,.0f}k",
                _ratio(part["instructions"], base["instructions"]),
                f"{part['last_level_misses']:,.0f}",
                _ratio(part["last_level_misses"], base["last_level_misses"]),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "-"


def _size(size: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def document(
    results: Sequence[PerAgent],
    last_level: int,
    ways: int,
    collector: bool,
    splits: Sequence[Split] = (),
) -> Mapping[str, object]:
    """What ``--json`` writes: the machine, the settings and every count."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "last_level": last_level,
        "ways": ways,
        "collector": collector,
        "turns": bench_instructions.bench_agents.TURNS,
        "results": [asdict(r) | {"per_agent": r.per_agent} for r in results],
        "split": [
            {"path": s.path, "once": s.once, "per_turn": s.per_turn, "short_turns": s.short.turns}
            for s in splits
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_instructions.add_size_arguments(parser)
    parser.add_argument(
        "--last-level",
        type=int,
        default=LAST_LEVEL,
        metavar="BYTES",
        help=f"the simulated last level's size (default {LAST_LEVEL}: this machine's L2)",
    )
    parser.add_argument(
        "--ways",
        type=int,
        default=LAST_LEVEL_WAYS,
        help=f"its ways (default {LAST_LEVEL_WAYS}; the sizes and ways cachegrind accepts)",
    )
    parser.add_argument("--collector", action="store_true", help="keep the cycle collector on")
    parser.add_argument(
        "--split",
        action="store_true",
        help=f"also count agents of {bench_instructions.SHORT_TURNS} turns: once per agent "
        "against per turn",
    )
    parser.add_argument("--jobs", type=int, default=2, help="children at a time (default 2)")
    parser.add_argument("--json", type=Path, help="write the counts here")
    bench_instructions.add_path_arguments(parser, child=False)
    args = parser.parse_args(argv)
    small, large = bench_instructions.chosen_sizes(args)
    paths = [path for path in bench_instructions.PATHS if not args.only or path in args.only]
    full = bench_instructions.bench_agents.TURNS
    lengths = (bench_instructions.SHORT_TURNS, full) if args.split else (full,)
    print(
        f"cache misses per agent: {', '.join(paths)} at {small} and {large} agents, "
        f"a last level of {_size(args.last_level)} ({args.ways} ways), "
        f"collector {'on' if args.collector else 'off'}"
        f"{', agents of ' + ' and '.join(map(str, lengths)) + ' turns' if args.split else ''} ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        results = measure(
            paths,
            small,
            large,
            jobs=args.jobs,
            counter=lambda path, agents, turns: count(
                path,
                agents,
                turns=turns,
                last_level=args.last_level,
                ways=args.ways,
                collector=args.collector,
            ),
            turns=lengths,
        )
    except bench_instructions.CountError as exc:
        print(f"bench_misses: {exc}", file=sys.stderr)
        return 1
    print(table([r for r in results if r.turns == full], args.last_level))
    splits = split(results) if args.split else []
    if splits:
        print()
        print(split_table(splits, args.last_level))
    if args.json is not None:
        settings = (args.last_level, args.ways, args.collector, splits)
        args.json.write_text(json.dumps(document(results, *settings), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
