"""Instructions per agent: the path users take against the kernel-agent path, counted, not timed.

CPU time on a shared 2-core machine moves by a third between two runs of the
same code (bench/README, the ninth round), more than one round of work
changes it. Instructions do not: ``valgrind --tool=callgrind`` counts the
instructions a process runs, and two runs of the same code agree to 0.1%.

Each path runs N agents of 10 turns (the ``echo-worker`` workload of
``bench_agents``, zero latency) in a process of its own under callgrind, at
two sizes; the difference divided by the difference in agents is what one
agent costs (its spawn, turns, result and close), with the process's start,
imports and the runtime's opening left out:

- ``kernel``: agents as kernel actors (``bench_agents.run_agents``);
- ``subagents``: ``open_runtime`` and ``rt.spawn`` with transcripts on (what
  ``runtime_turns`` measures), and ``no_transcripts`` with them off.

``--split`` counts each path again with agents of 2 turns: the slope
between the two runs is what one turn costs, and the rest is what an agent
costs once (its spawn, its result and its close), whatever its turns.

System calls, the transcripts' helper process and cache misses are not
counted: this is the Python work, the part a change to the runtime moves.
The cycle collector is off in the children unless ``--collector`` is given
(its share depends on when collections happen to start).

    python bench/bench_instructions.py             # 200 and 400 agents
    python bench/bench_instructions.py --quick     # 50 and 100 agents
    python bench/bench_instructions.py --split     # and per turn against once per agent
    python bench/bench_instructions.py --json instructions.json
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import trio

# --split's short run and the split itself are subagents bench's: both read an agent alike.
from subagents.cli._bench.run import SHORT_TURNS, split_agent

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_agents  # the workload, beside this file

#: The paths counted, in the order of the table: the first is the one ratios are to.
PATHS = ("kernel", "subagents", "no_transcripts")
#: A child under callgrind runs 20 to 50 times slower than natively.
CHILD_TIMEOUT = 1800.0
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)
INSTALL = "install valgrind (Debian: apt install valgrind)"


class CountError(RuntimeError):
    """A count could not be made: valgrind is missing, or a child failed."""


@dataclass(frozen=True)
class PerAgent:
    """One path's instructions per agent, from two counts at two sizes."""

    path: str
    small: int
    large: int
    small_count: int
    large_count: int
    turns: int = bench_agents.TURNS

    @property
    def per_agent(self) -> float:
        return (self.large_count - self.small_count) / (self.large - self.small)


@dataclass(frozen=True)
class Split:
    """One path's agent cost split in two, from agents of two lengths: what each turn
    costs, and what the agent costs once (spawn, result, close)."""

    path: str
    short: PerAgent
    long: PerAgent

    @property
    def per_turn(self) -> float:
        return self._parts[1]

    @property
    def once(self) -> float:
        return self._parts[0]

    @property
    def _parts(self) -> tuple[float, float]:
        lengths = (self.short.turns, self.long.turns)
        return split_agent(self.short.per_agent, self.long.per_agent, lengths)


def run_path(
    path: str,
    agents: int,
    root: Path,
    turns: int = bench_agents.TURNS,
    window: Callable[[bool], object] | None = None,
) -> None:
    """Run ``agents`` agents of ``turns`` turns on ``path`` (see :data:`PATHS`), in this process
    (``window``: called as the measured interval opens and closes, see ``bench_agents``)."""
    if path == "kernel":
        trio.run(
            functools.partial(bench_agents.run_agents, agents, 0.0, turns=turns, window=window)
        )
    elif path in ("subagents", "no_transcripts"):
        trio.run(
            functools.partial(
                bench_agents.run_runtime_agents,
                agents,
                transcripts=path == "subagents",
                root=root,
                turns=turns,
                window=window,
            )
        )
    else:
        raise ValueError(f"unknown path {path!r}; expected one of {', '.join(PATHS)}")


def collected(report: str) -> int:
    """The instructions callgrind says it collected, from its report on stderr."""
    found = _COLLECTED.findall(report)
    if len(found) != 1:
        raise CountError(f"callgrind's report names no single count:\n{report[-2000:]}")
    return int(found[0])


def count(
    path: str,
    agents: int,
    *,
    turns: int = bench_agents.TURNS,
    collector: bool = False,
    valgrind: str | None = None,
    runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> int:
    """Instructions of a child process running ``agents`` agents of ``turns`` turns on
    ``path`` under callgrind."""
    valgrind = valgrind or shutil.which("valgrind")
    if valgrind is None:
        raise CountError(f"valgrind is not on PATH: {INSTALL}.")
    with tempfile.TemporaryDirectory(prefix="subagents-instructions-") as folder:
        command = [
            valgrind,
            "--tool=callgrind",
            f"--callgrind-out-file={Path(folder) / 'callgrind.out'}",
            *child_command(Path(__file__), path, agents, turns),
        ]
        if collector:
            command.append("--collector")
        report = run_child(command, path, agents, "callgrind", CHILD_TIMEOUT, runner)
    return collected(report)


def run_child(
    command: list[str],
    path: str,
    agents: int,
    tool: str,
    timeout: float,
    runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> str:
    """Run a child counting ``agents`` agents on ``path`` under valgrind's ``tool`` (its
    command ``command``, the hash seed fixed); its report (stderr), or a
    :class:`CountError` that says what went wrong."""
    return run_command(
        command,
        f"{path} with {agents} agents",
        timeout,
        hint="try smaller sizes (--quick).",
        where=f" under {tool}",
        runner=runner,
    ).stderr


def run_command(
    command: list[str],
    what: str,
    timeout: float,
    *,
    hint: str,
    where: str = "",
    runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (``what`` it does, ``where``: under which tool) with the hash seed
    fixed; the finished process, or a :class:`CountError` that says what went wrong and,
    after a timeout, ``hint``."""
    try:
        done = runner(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=child_environment(),
        )
    except subprocess.TimeoutExpired:
        raise CountError(f"{what} ran over {timeout:g} s{where}: {hint}") from None
    if done.returncode != 0:
        raise CountError(f"{what} failed{where} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return done


def measure(
    paths: Sequence[str],
    small: int,
    large: int,
    *,
    collector: bool = False,
    jobs: int = 2,
    counter: Callable[..., int] = count,
    turns: Sequence[int] = (bench_agents.TURNS,),
) -> list[PerAgent]:
    """Each path at both sizes (``jobs`` children at a time) for each length of run in
    ``turns``; its instructions per agent, path by path, then length by length."""
    if not 0 < small < large:
        raise ValueError(f"the sizes must be 0 < small < large (got {small} and {large})")
    runs = [(path, n, t) for path in paths for t in turns for n in (small, large)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        counts = list(
            pool.map(lambda run: counter(run[0], run[1], turns=run[2], collector=collector), runs)
        )
    by_run = dict(zip(runs, counts, strict=True))
    return [
        PerAgent(path, small, large, by_run[path, small, t], by_run[path, large, t], t)
        for path in paths
        for t in turns
    ]


class _Run(Protocol):
    path: str
    turns: int


_R = TypeVar("_R", bound=_Run)


def pair_lengths(results: Sequence[_R]) -> list[tuple[str, _R, _R]]:
    """Each path's short and long runs (from a ``measure`` with two lengths), in order."""
    by_path: dict[str, list[_R]] = {}
    for result in results:
        by_path.setdefault(result.path, []).append(result)
    pairs = []
    for path, runs in by_path.items():
        if len({r.turns for r in runs}) != 2:
            raise ValueError(f"{path} needs runs of two lengths to split (got {len(runs)})")
        short, long = sorted(runs, key=lambda r: r.turns)
        pairs.append((path, short, long))
    return pairs


def split(results: Sequence[PerAgent]) -> list[Split]:
    """Pair each path's short and long runs (from :func:`measure` with two lengths)."""
    return [Split(path, short, long) for path, short, long in pair_lengths(results)]


def table(results: Sequence[PerAgent]) -> str:
    """The Markdown table: instructions per agent and per turn, and the ratio to the first path."""
    base, first = results[0].per_agent, results[0].path
    lines = [
        f"| path | instructions per agent | per turn (/{bench_agents.TURNS}) | / {first} |",
        "|---|---:|---:|---:|",
    ]
    for result in results:
        value = result.per_agent
        lines.append(
            f"| {result.path} | {value / 1e6:.3f}M | {value / bench_agents.TURNS / 1e3:.1f}k "
            f"| {value / base:.2f}x |"
        )
    return "\n".join(lines)


def split_table(splits: Sequence[Split]) -> str:
    """The Markdown table of ``--split``: once per agent and per turn, each against the
    first path's."""
    first = splits[0]
    lines = [
        f"| path | once per agent (spawn, result, close) | / {first.path} "
        f"| per turn | / {first.path} |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in splits:
        lines.append(
            f"| {row.path} | {row.once / 1e3:.0f}k | {row.once / first.once:.2f}x "
            f"| {row.per_turn / 1e3:.1f}k | {row.per_turn / first.per_turn:.2f}x |"
        )
    return "\n".join(lines)


def child_command(script: Path, path: str, agents: int, turns: int) -> list[str]:
    """The command that runs ``script``'s child for ``agents`` agents of ``turns`` turns on
    ``path`` (see :func:`add_path_arguments`), with this interpreter."""
    return [sys.executable, str(script.resolve()), "--child", path, str(agents), str(turns)]


def child_environment() -> dict[str, str]:
    """This process's environment with the same hash seed for every child: the same dict
    layouts, so the same counts."""
    return {**os.environ, "PYTHONHASHSEED": "0"}


def add_path_arguments(parser: argparse.ArgumentParser, *, child: bool = True) -> None:
    """``--only PATH`` (repeatable), and the hidden ``--child PATH AGENTS TURNS`` a counting
    script runs its children with (this one's and ``bench_bytecodes.py``'s; ``child=False``
    for a script that runs this one's)."""
    parser.add_argument("--only", action="append", choices=PATHS, help="a path (repeatable)")
    if child:
        parser.add_argument(
            "--child", nargs=3, metavar=("PATH", "AGENTS", "TURNS"), help=argparse.SUPPRESS
        )


#: The two sizes counted, in agents, and those of ``--quick``.
SIZES = (200, 400)
QUICK_SIZES = (50, 100)


def add_size_arguments(parser: argparse.ArgumentParser) -> None:
    """``--quick`` and ``--sizes SMALL LARGE``; :func:`chosen_sizes` reads them."""
    quick = " and ".join(map(str, QUICK_SIZES))
    parser.add_argument("--quick", action="store_true", help=f"{quick} agents")
    parser.add_argument("--sizes", type=int, nargs=2, metavar=("SMALL", "LARGE"))


def chosen_sizes(args: argparse.Namespace) -> tuple[int, int]:
    """The sizes :func:`add_size_arguments`' options ask for (:data:`SIZES` by default)."""
    small, large = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    return small, large


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_size_arguments(parser)
    parser.add_argument("--collector", action="store_true", help="keep the cycle collector on")
    parser.add_argument(
        "--split",
        action="store_true",
        help=f"also count agents of {SHORT_TURNS} turns: once per agent against per turn",
    )
    parser.add_argument("--jobs", type=int, default=2, help="children at a time (default 2)")
    parser.add_argument("--json", type=Path, help="write the counts here")
    add_path_arguments(parser)
    args = parser.parse_args(argv)
    if args.child is not None:
        was_enabled = gc.isenabled()
        if not args.collector:
            gc.disable()
        try:
            with tempfile.TemporaryDirectory(prefix="subagents-instructions-") as root:
                run_path(args.child[0], int(args.child[1]), Path(root), int(args.child[2]))
        finally:
            if was_enabled:
                gc.enable()
        return 0
    small, large = chosen_sizes(args)
    paths = [path for path in PATHS if not args.only or path in args.only]
    lengths = (SHORT_TURNS, bench_agents.TURNS) if args.split else (bench_agents.TURNS,)
    print(
        f"instructions per agent: {', '.join(paths)} at {small} and {large} agents "
        f"x {' and '.join(map(str, lengths))} turns, "
        f"collector {'on' if args.collector else 'off'} ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        results = measure(
            paths,
            small,
            large,
            collector=args.collector,
            jobs=args.jobs,
            turns=lengths,
            counter=count,  # looked up now: a test stands in for valgrind here
        )
    except CountError as exc:
        print(f"bench_instructions: {exc}", file=sys.stderr)
        return 1
    full = [r for r in results if r.turns == bench_agents.TURNS]
    print(table(full))
    splits = split(results) if args.split else []
    if splits:
        print()
        print(split_table(splits))
    if args.json is not None:
        document = {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "collector": args.collector,
            "turns": bench_agents.TURNS,
            "results": [asdict(r) | {"per_agent": r.per_agent} for r in full],
            "split": [
                {"path": s.path, "once": s.once, "per_turn": s.per_turn, "short_turns": SHORT_TURNS}
                for s in splits
            ],
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
