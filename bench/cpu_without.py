"""The CPU ratio of the path users take to the kernel path's, with parts of it switched off.

``runtime_turns_cpu`` says what a turn costs on ``open_runtime`` (transcripts on)
against kernel agents; ``misses_without.py`` counts what each part costs in
instructions and cache misses. This measures what the target is set in: the CPU
ratio itself, with a set of parts replaced by no-ops (``misses_without.PARTS``:
``progress_facts``, ``kept_lines``, ``log_sink``, ``transcript_writes``), for
the measurement only: the agents still run their turns to completion.

Each child process runs the kernel agents, then ``open_runtime``'s, ``--agents``
of 10 turns each, ``--reps`` times (best of each, as ``runtime_turns_cpu``), with
one variant's parts off, and reports both paths' CPU a turn. The variants
alternate child by child, their order reversed each round: this machine's
speed moves more from one hour to the next than most parts' shares, so only
children run side by side are compared. The state folders are kept until the
end (some file systems make new files slowly for minutes after a mass deletion).

    python bench/cpu_without.py --variant transcript_writes,log_sink,progress_facts
    python bench/cpu_without.py --rounds 20 --variant log_sink --variant progress_facts
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_agents  # the two workloads, beside this file
import bench_instructions  # a child's command and how a failed one is told
import misses_without  # the parts and how each is switched off

#: A variant with every part on.
NONE = "none"
#: What a child may take at most (2 x 2 runs of 1,000 agents take a few seconds).
CHILD_TIMEOUT = 600.0


def parse_variant(text: str) -> tuple[str, ...]:
    """The parts a variant switches off, from ``a,b`` (``none``: no part), sorted; a
    part that does not exist is a :class:`ValueError` that names those that do."""
    if text.strip() == NONE:
        return ()
    parts = sorted({part.strip() for part in text.split(",") if part.strip()})
    unknown = [part for part in parts if part not in misses_without.PARTS]
    if unknown or not parts:
        raise ValueError(
            f"unknown part(s) {', '.join(map(repr, unknown)) or repr(text)}; expected "
            f"{NONE!r} or a comma-separated list of {', '.join(misses_without.PARTS)}"
        )
    return tuple(parts)


def name(parts: Sequence[str]) -> str:
    """A variant's name: its parts joined by commas, or ``none``."""
    return ",".join(parts) or NONE


def child(
    parts: Sequence[str],
    agents: int,
    reps: int,
    root: Path,
    setattr_: Callable[[object, str, object], None] = setattr,
) -> dict[str, float]:
    """Both paths' CPU a turn (us, best of ``reps`` each) with ``parts`` switched off, in
    this process (``setattr_``: a test's ``monkeypatch.setattr``)."""
    for part in parts:
        misses_without.switch_off(part, setattr_)
    kernel: list[float] = []
    runtime: list[float] = []
    for _ in range(reps):
        trio.run(functools.partial(bench_agents.run_agents, agents, 0.0, cpu=kernel))
    for rep in range(reps):
        folder = Path(tempfile.mkdtemp(prefix=f"rep{rep}-", dir=root))
        trio.run(
            functools.partial(
                bench_agents.run_runtime_agents, agents, transcripts=True, root=folder, cpu=runtime
            )
        )
    turns = agents * bench_agents.TURNS
    return {"kernel": min(kernel) * 1e6 / turns, "runtime": min(runtime) * 1e6 / turns}


def run_child(
    parts: Sequence[str],
    agents: int,
    reps: int,
    root: Path,
    runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> dict[str, float]:
    """:func:`child` in a fresh process (this script's ``--child``)."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        name(parts),
        str(agents),
        str(reps),
        str(root),
    ]
    done = bench_instructions.run_command(
        command,
        f"{name(parts)} with {agents} agents",
        CHILD_TIMEOUT,
        hint="try fewer agents (--agents).",
        runner=runner,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def measure(
    variants: Sequence[tuple[str, ...]],
    rounds: int,
    *,
    measure_child: Callable[[tuple[str, ...]], Mapping[str, float]],
) -> dict[str, list[Mapping[str, float]]]:
    """Each variant's children, ``rounds`` of them, alternated: every round runs one child
    of each, in the order of ``variants`` and reversed the next round."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1 (got {rounds})")
    if len(set(variants)) != len(variants) or not variants:
        raise ValueError("give each variant once, and at least one")
    results: dict[str, list[Mapping[str, float]]] = {name(v): [] for v in variants}
    for index in range(rounds):
        order = variants if index % 2 == 0 else variants[::-1]
        for variant in order:
            results[name(variant)].append(measure_child(variant))
    return results


def table(results: Mapping[str, Sequence[Mapping[str, float]]]) -> str:
    """The Markdown table: each variant's ratio (the median of its children's, and their
    range) and the median CPU a turn of each path."""
    lines = [
        "| parts switched off | open_runtime / kernel, median (range) | open_runtime a turn "
        "| kernel a turn | children |",
        "|---|---:|---:|---:|---:|",
    ]
    for variant, children in results.items():
        ratios = [c["runtime"] / c["kernel"] for c in children]
        runtime = statistics.median(c["runtime"] for c in children)
        kernel = statistics.median(c["kernel"] for c in children)
        lines.append(
            f"| {'(none: everything on)' if variant == NONE else variant} "
            f"| {statistics.median(ratios):.2f}x ({min(ratios):.2f}x to {max(ratios):.2f}x) "
            f"| {runtime:.1f} us | {kernel:.1f} us | {len(children)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="parts switched off together, comma-separated (repeatable; 'none' is always run)",
    )
    parser.add_argument("--rounds", type=int, default=10, help="children of each variant")
    parser.add_argument("--agents", type=int, default=bench_agents.SIZES["turns"])
    parser.add_argument("--reps", type=int, default=2, help="runs of each path in a child")
    parser.add_argument("--json", type=Path, help="write every child's figures here")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        parts, agents, reps, root = args.child
        figures = child(parse_variant(parts), int(agents), int(reps), Path(root))
        print(json.dumps(figures))
        return 0
    try:
        variants = [()] + [parse_variant(text) for text in args.variant]
        variants = list(dict.fromkeys(variants))
    except ValueError as exc:
        parser.error(str(exc))
    print(
        f"CPU a turn, open_runtime against kernel agents, {args.agents} agents x "
        f"{bench_agents.TURNS} turns, {args.rounds} children of each of "
        f"{', '.join(map(name, variants))} ...",
        file=sys.stderr,
        flush=True,
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="subagents-cpu-without-") as root:
        try:
            results = measure(
                variants,
                args.rounds,
                measure_child=lambda parts: run_child(parts, args.agents, args.reps, Path(root)),
            )
        except bench_instructions.CountError as exc:
            print(f"cpu_without: {exc}", file=sys.stderr)
            return 1
    print(table(results))
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    if args.json is not None:
        document: dict[str, Any] = {
            "agents": args.agents,
            "turns": bench_agents.TURNS,
            "reps": args.reps,
            "children": results,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
