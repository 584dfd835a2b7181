"""Bytecodes per agent, function by function: where a path's Python work goes, counted.

``bench_instructions.py`` says how much work an agent costs; this says where it
goes. Python 3.12's ``sys.monitoring`` reports every bytecode instruction a
function runs (the ``INSTRUCTION`` event), so a child process counts, for each
function, the instructions it ran while ``N`` agents of 10 turns went through a
path (the same workloads as ``bench_instructions.py``: ``kernel``,
``subagents``, ``no_transcripts``). Two sizes, and the difference divided by the
difference in agents, leave out the process's start and the runtime's opening.
The counts are the same from one run to the next but for what moves with the
transcripts' helper process (a few hundred an agent), however loaded the
machine: a profile that does not need a quiet hour, and whose entries add up.

A bytecode is not a unit of time (a call into C, a dict lookup and a ``+=``
each count one), and work in C (``msgspec``, system calls) is not counted: the
instruction counts are the figure to judge a change by; this is the map of where
to look. Needs Python 3.12 or later.

    python3.12 bench/bench_bytecodes.py                  # 50 and 100 agents
    python3.12 bench/bench_bytecodes.py --top 40 --only subagents --only kernel
    python3.12 bench/bench_bytecodes.py --json bytecodes.json
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import CodeType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_instructions  # the paths and their workloads, beside this file

PATHS = bench_instructions.PATHS
#: The tool id this script takes in ``sys.monitoring`` (3 of the six free ones).
TOOL_ID = 3
#: A child counting every bytecode runs about 30 times slower than natively.
CHILD_TIMEOUT = 1800.0
_ROOT = str(Path(__file__).resolve().parent.parent) + os.sep


class CountError(RuntimeError):
    """A count could not be made: Python older than 3.12, or a child failed."""


def require_monitoring(version: Sequence[int] = sys.version_info) -> None:
    """Raise :class:`CountError` unless this Python has ``sys.monitoring`` (3.12 or later)."""
    if tuple(version[:2]) < (3, 12):
        found = ".".join(map(str, version[:3]))
        raise CountError(
            f"counting bytecodes needs Python 3.12 or later (sys.monitoring); this is "
            f"{found}: run this script with python3.12 or newer"
        )


def relative_file(filename: str) -> str:
    """``filename`` relative to the repository, or to site-packages for an installed one."""
    if filename.startswith(_ROOT):
        return filename[len(_ROOT) :]
    return filename.rsplit("site-packages" + os.sep, 1)[-1]


def function_name(code: CodeType) -> str:
    """``file:line qualname``, the file as :func:`relative_file` gives it."""
    return f"{relative_file(code.co_filename)}:{code.co_firstlineno} {code.co_qualname}"


def count_in_process(run: Callable[[], object]) -> dict[str, int]:
    """The bytecode instructions each function ran during ``run()``, by :func:`function_name`."""
    require_monitoring()
    monitoring: Any = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    counts: collections.Counter[CodeType] = collections.Counter()

    def instruction(code: CodeType, offset: int) -> None:
        counts[code] += 1

    monitoring.use_tool_id(TOOL_ID, "subagents bench_bytecodes")
    try:
        monitoring.register_callback(TOOL_ID, monitoring.events.INSTRUCTION, instruction)
        monitoring.set_events(TOOL_ID, monitoring.events.INSTRUCTION)
        try:
            run()
        finally:
            monitoring.set_events(TOOL_ID, 0)
            monitoring.register_callback(TOOL_ID, monitoring.events.INSTRUCTION, None)
    finally:
        monitoring.free_tool_id(TOOL_ID)
    named: collections.Counter[str] = collections.Counter()
    for code, value in counts.items():
        named[function_name(code)] += value
    return dict(named)


def count(
    path: str, agents: int, *, turns: int = 10, timeout: float = CHILD_TIMEOUT
) -> dict[str, int]:
    """The counts of a child process running ``agents`` agents of ``turns`` turns on ``path``."""
    require_monitoring()
    command = bench_instructions.child_command(Path(__file__), path, agents, turns)
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=bench_instructions.child_environment(),
        )
    except subprocess.TimeoutExpired:
        raise CountError(
            f"{path} with {agents} agents ran over {timeout:g} s: try smaller sizes"
        ) from None
    if done.returncode != 0:
        raise CountError(
            f"{path} with {agents} agents failed (exit {done.returncode}):\n{done.stderr[-2000:]}"
        )
    counts: dict[str, int] = json.loads(done.stdout)
    return counts


def per_agent(
    small: Mapping[str, int], large: Mapping[str, int], agents: tuple[int, int]
) -> dict[str, float]:
    """What one agent adds to each function: the difference between two sizes, per agent
    (functions that ran only in one of the two count as 0 in the other)."""
    spread = agents[1] - agents[0]
    if spread <= 0:
        raise ValueError(f"the second size must be larger than the first (got {agents})")
    names = set(small) | set(large)
    return {name: (large.get(name, 0) - small.get(name, 0)) / spread for name in names}


def excess(path: Mapping[str, float], baseline: Mapping[str, float]) -> list[tuple[str, float]]:
    """Each function's bytecodes an agent on ``path`` beyond ``baseline``'s, largest first."""
    names = set(path) | set(baseline)
    rows = [(name, path.get(name, 0.0) - baseline.get(name, 0.0)) for name in names]
    return sorted(rows, key=lambda row: (-row[1], row[0]))


def by_file(functions: Mapping[str, float]) -> list[tuple[str, float]]:
    """The functions' counts summed by their file, largest first."""
    files: dict[str, float] = {}
    for name, value in functions.items():
        file = name.split(":", 1)[0]
        files[file] = files.get(file, 0.0) + value
    return sorted(files.items(), key=lambda row: (-row[1], row[0]))


def report(profiles: Mapping[str, Mapping[str, float]], top: int) -> str:
    """The totals per agent, each path's ratio to the first, and where the rest goes."""
    paths = list(profiles)
    first = paths[0]
    base = sum(profiles[first].values())
    lines = ["| path | bytecodes per agent | / " + first + " |", "|---|---:|---:|"]
    for path in paths:
        total = sum(profiles[path].values())
        lines.append(f"| {path} | {total:,.0f} | {total / base:.2f}x |")
    for path in paths[1:]:
        lines += ["", f"{path}, beyond {first}, by file (bytecodes an agent):", ""]
        rows = excess(dict(by_file(profiles[path])), dict(by_file(profiles[first])))
        lines += [f"{value:>9,.0f}  {name}" for name, value in rows[:top] if value]
        lines += ["", f"{path}, beyond {first}, by function:", ""]
        rows = excess(profiles[path], profiles[first])
        lines += [f"{value:>9,.0f}  {name}" for name, value in rows[:top] if value]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, metavar=("SMALL", "LARGE"), default=(50, 100))
    parser.add_argument("--top", type=int, default=30, help="rows of each list (default 30)")
    parser.add_argument("--json", type=Path, help="write every function's count here")
    bench_instructions.add_path_arguments(parser)
    args = parser.parse_args(argv)
    try:
        require_monitoring()
    except CountError as exc:
        print(f"bench_bytecodes: {exc}", file=sys.stderr)
        return 1
    if args.child is not None:
        path, agents, turns = args.child[0], int(args.child[1]), int(args.child[2])
        gc.disable()  # collections start where they happen to: left out, as in the counts
        with tempfile.TemporaryDirectory(prefix="subagents-bytecodes-") as root:
            counts = count_in_process(
                lambda: bench_instructions.run_path(path, agents, Path(root), turns)
            )
        json.dump(counts, sys.stdout)
        return 0
    small, large = args.sizes
    paths = [path for path in PATHS if not args.only or path in args.only]
    print(
        f"bytecodes per agent: {', '.join(paths)} at {small} and {large} agents x 10 turns ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        profiles = {
            path: per_agent(count(path, small), count(path, large), (small, large))
            for path in paths
        }
    except CountError as exc:
        print(f"bench_bytecodes: {exc}", file=sys.stderr)
        return 1
    print(report(profiles, args.top))
    if args.json is not None:
        document = {
            "python": platform.python_version(),
            "sizes": [small, large],
            "per_agent": {
                path: dict(sorted(profile.items())) for path, profile in profiles.items()
            },
        }
        args.json.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
