"""CPU time per function, sampled: where a path's time goes, memory stalls and syscalls included.

``bench_instructions.py`` counts what the CPU executes and ``bench_bytecodes.py``
what the interpreter runs; neither sees what a turn waits for (a cache miss, the
kernel's side of a system call), which is why the CPU ratio of two paths is
higher than their instruction ratio. This samples the time itself: ``perf
record`` samples the CPU of a child running N agents of 10 turns on a path
(the workloads of ``bench_instructions.py``: ``kernel``, ``subagents``,
``no_transcripts``), only while they run (perf's control fifo, switched on and
off around the interval ``runtime_turns_cpu`` measures). Python 3.12's perf
trampoline (``-X perf``) puts each Python function in the native stack, which
perf unwinds from DWARF. Each sample of the child's main thread goes to the
innermost Python function on its stack, with the C code under it (a
``write``'s system call counts to the function that wrote), or to the cycle
collector when a collection is on the stack, or to ``<no Python frame>``. The
transcripts' helper process and the worker threads are left out, as
``runtime_turns_cpu`` leaves them out. Each path keeps its collector policy, as a
user gets it (the runtime ``relaxed``, the kernel Python's own).

Samples are not counts: two runs differ by a few percent, more on a busy
machine (``--reps`` adds runs up). Judge a change by the instruction counts;
this is where the time is. Needs Linux ``perf`` and Python 3.12 or later.

    python3.12 bench/bench_samples.py                    # 1,000 agents, every path
    python3.12 bench/bench_samples.py --only kernel --only subagents --top 40
    python3.12 bench/bench_samples.py --reps 3 --json samples.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_bytecodes  # excess and by_file, beside this file
import bench_instructions  # the paths and their workloads

PATHS = bench_instructions.PATHS
#: Samples a second (not a round figure: a sampler in step with a timer sees it every time).
DEFAULT_FREQUENCY = 997
#: The agents of each run: ``runtime_turns_cpu``'s size.
DEFAULT_AGENTS = 1000
#: Where samples go that are not a Python function's.
COLLECTOR = "<cycle collector>"
NO_PYTHON = "<no Python frame>"
#: A child under perf with DWARF stacks runs a few times slower than natively.
CHILD_TIMEOUT = 900.0
#: Bytes of each sample's stack perf copies to unwind (enough for a Trio task's depth).
STACK_BYTES = 16384
INSTALL = "install perf (Debian: apt install linux-perf)"
#: A sample's first line in ``perf script -F pid,tid,ip,sym``: ``pid/tid``, the pid padded
#: to five columns (`` 5507/5507``), so a short pid's line starts with a space as frames do.
_HEADER = re.compile(r"\s*(\d+)/(\d+)\s*$")


class SampleError(bench_instructions.CountError):
    """Samples could not be taken: no perf, a Python older than 3.12, or a child failed."""


def require_tools(
    version: Sequence[int] = sys.version_info,
    which: Callable[[str], str | None] = shutil.which,
) -> None:
    """Raise :class:`SampleError` unless this Python has the perf trampoline (3.12 or later)
    and ``perf`` is on the path (as ``which`` finds it)."""
    if tuple(version[:2]) < (3, 12):
        found = ".".join(map(str, version[:3]))
        raise SampleError(
            f"sampling needs Python 3.12 or later (-X perf names Python functions to perf); "
            f"this is {found}: run this script with python3.12 or newer"
        )
    if which("perf") is None:
        raise SampleError(f"perf was not found: {INSTALL}")


def function_name(symbol: str) -> str | None:
    """``file:qualname`` of a trampoline's symbol (``py::qualname:/path/file.py``), the file
    relative to the repository or to site-packages; ``None`` for any other symbol."""
    if not symbol.startswith("py::"):
        return None
    qualname, _, filename = symbol[4:].partition(":")
    return f"{bench_bytecodes.relative_file(filename)}:{qualname}"


def _owner(frames: Sequence[str]) -> str:
    """Where one sample's time goes: its frames are innermost first."""
    if any(frame.startswith("gc_collect") for frame in frames):
        return COLLECTOR
    for frame in frames:
        name = function_name(frame)
        if name is not None:
            return name
    return NO_PYTHON


def attribute(script: str, pid: int) -> collections.Counter[str]:
    """The samples of ``pid``'s main thread in ``perf script -F pid,tid,ip,sym`` output, by
    where their time goes (:data:`COLLECTOR`, :data:`NO_PYTHON` or a function's name)."""
    counts: collections.Counter[str] = collections.Counter()
    frames: list[str] = []
    keep = False
    for line in script.splitlines():
        if not line.strip():
            continue
        header = _HEADER.match(line)
        if header is None:  # a frame: "<ip> <symbol>"
            _, _, symbol = line.strip().partition(" ")
            frames.append(symbol.strip())
            continue
        # A sample's first line: the one before it ends here, blank line or not.
        if keep:
            counts[_owner(frames)] += 1
        frames, keep = [], header[1] == header[2] == str(pid)
    if keep:
        counts[_owner(frames)] += 1
    return counts


def per_turn(samples: float, frequency: int, turns: int) -> float:
    """Microseconds of CPU a turn, from ``samples`` taken ``frequency`` times a second over
    ``turns`` turns."""
    return samples / frequency / turns * 1e6


def child_command(
    script: Path, path: str, agents: int, turns: int, fifos: tuple[Path, Path]
) -> list[str]:
    """The command of a child that runs ``path`` and switches perf on and off through
    ``fifos`` (control, acknowledgement) around the measured interval."""
    return [
        sys.executable,
        "-X",
        "perf",
        str(script.resolve()),
        "--child",
        path,
        str(agents),
        str(turns),
        "--fifos",
        str(fifos[0]),
        str(fifos[1]),
    ]


def sample(
    path: str,
    agents: int,
    *,
    turns: int = 10,
    frequency: int = DEFAULT_FREQUENCY,
    timeout: float = CHILD_TIMEOUT,
) -> collections.Counter[str]:
    """The samples of one child running ``agents`` agents of ``turns`` turns on ``path``."""
    require_tools()
    with tempfile.TemporaryDirectory(prefix="subagents-samples-") as folder:
        control, ack, data = (Path(folder) / name for name in ("control", "ack", "perf.data"))
        os.mkfifo(control)
        os.mkfifo(ack)
        command = [
            "perf",
            "record",
            "--quiet",
            "-F",
            str(frequency),
            "--call-graph",
            f"dwarf,{STACK_BYTES}",
            "-D",
            "-1",  # off until the child switches it on
            "--control",
            f"fifo:{control},{ack}",
            "-o",
            str(data),
            "--",
            *child_command(Path(__file__), path, agents, turns, (control, ack)),
        ]
        done = _run(command, timeout, f"{path} with {agents} agents")
        try:
            pid = int(json.loads(done.stdout)["pid"])
        except (ValueError, KeyError, TypeError):
            raise SampleError(f"the child gave no pid:\n{done.stdout[-500:]}") from None
        script = _run(
            ["perf", "script", "-i", str(data), "-F", "pid,tid,ip,sym"],
            timeout,
            f"reading {path}'s samples",
        )
        counts = attribute(script.stdout, pid)
    if not counts:
        raise no_samples(script.stdout, pid)
    return counts


def no_samples(script: str, pid: int) -> SampleError:
    """The error for a ``perf script`` output with no sample of ``pid``'s main thread: it
    names the threads perf did sample, the most sampled first."""
    threads = collections.Counter(
        f"{header[1]}/{header[2]}"
        for header in map(_HEADER.match, script.splitlines())
        if header is not None
    )
    return SampleError(
        f"perf took no samples of the child's main thread ({pid}/{pid}); it took these, "
        f"by process/thread: {dict(threads.most_common(5)) or 'none'}"
    )


def _run(command: list[str], timeout: float, what: str) -> subprocess.CompletedProcess[str]:
    try:
        return bench_instructions.run_command(command, what, timeout, hint="try fewer agents")
    except bench_instructions.CountError as exc:
        # perf says itself when the kernel refuses it (sysctl kernel.perf_event_paranoid).
        raise SampleError(str(exc)) from None


def report(
    profiles: Mapping[str, Mapping[str, float]], *, frequency: int, turns: int, top: int
) -> str:
    """Each path's CPU a turn against the first's, the collector's part, and where the rest
    goes, by file and by function (microseconds a turn)."""
    paths = list(profiles)
    first = paths[0]
    base = sum(profiles[first].values())
    lines = [
        f"| path | samples | CPU a turn | / {first} | cycle collector |",
        "|---|---:|---:|---:|---:|",
    ]
    for path in paths:
        total = sum(profiles[path].values())
        collector = profiles[path].get(COLLECTOR, 0.0)
        lines.append(
            f"| {path} | {total:,.0f} | {per_turn(total, frequency, turns):.1f} us "
            f"| {total / base:.2f}x | {100 * collector / total if total else 0:.0f}% |"
        )
    for path in paths[1:]:
        for label, rows in (
            (
                "by file",
                bench_bytecodes.excess(
                    dict(bench_bytecodes.by_file(profiles[path])),
                    dict(bench_bytecodes.by_file(profiles[first])),
                ),
            ),
            ("by function", bench_bytecodes.excess(profiles[path], profiles[first])),
        ):
            lines += ["", f"{path}, beyond {first}, {label} (us a turn):", ""]
            lines += [
                f"{per_turn(value, frequency, turns):>8.2f}  {name}"
                for name, value in rows[:top]
                if value
            ]
    return "\n".join(lines)


def _child(args: argparse.Namespace) -> int:
    path, agents, turns = args.child[0], int(args.child[1]), int(args.child[2])
    # perf opens both fifos as it starts: the control one to read, the other to answer.
    with open(args.fifos[0], "w", buffering=1) as control, open(args.fifos[1]) as ack:

        def window(on: bool) -> None:
            control.write("enable\n" if on else "disable\n")
            ack.readline()  # perf's "ack": sampling is on (or off) from here

        with tempfile.TemporaryDirectory(prefix="subagents-samples-") as root:
            bench_instructions.run_path(path, agents, Path(root), turns, window=window)
    json.dump({"pid": os.getpid()}, sys.stdout)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=DEFAULT_AGENTS)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--reps", type=int, default=1, help="runs of each path, added up")
    parser.add_argument("--frequency", type=int, default=DEFAULT_FREQUENCY)
    parser.add_argument("--top", type=int, default=30, help="rows of each list (default 30)")
    parser.add_argument("--json", type=Path, help="write every function's samples here")
    parser.add_argument("--fifos", nargs=2, type=Path, help=argparse.SUPPRESS)
    bench_instructions.add_path_arguments(parser)
    args = parser.parse_args(argv)
    if args.child is not None:
        if args.fifos is None:
            parser.error("--child runs under perf, with --fifos CONTROL ACK (see sample())")
        return _child(args)
    try:
        require_tools()
    except SampleError as exc:
        print(f"bench_samples: {exc}", file=sys.stderr)
        return 1
    paths = [path for path in PATHS if not args.only or path in args.only]
    print(
        f"CPU samples: {', '.join(paths)}, {args.agents} agents x {args.turns} turns, "
        f"{args.reps} run(s) each, {args.frequency} a second ...",
        file=sys.stderr,
        flush=True,
    )
    profiles: dict[str, collections.Counter[str]] = {}
    try:
        for path in paths:
            profile: collections.Counter[str] = collections.Counter()
            for _ in range(args.reps):
                profile.update(
                    sample(path, args.agents, turns=args.turns, frequency=args.frequency)
                )
            profiles[path] = profile
    except SampleError as exc:
        print(f"bench_samples: {exc}", file=sys.stderr)
        return 1
    turns = args.agents * args.turns * args.reps
    print(report(profiles, frequency=args.frequency, turns=turns, top=args.top))
    if args.json is not None:
        document = {
            "python": platform.python_version(),
            "agents": args.agents,
            "turns": args.turns,
            "reps": args.reps,
            "frequency": args.frequency,
            "samples": {path: dict(profile.most_common()) for path, profile in profiles.items()},
        }
        args.json.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
