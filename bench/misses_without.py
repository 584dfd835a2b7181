"""Cache misses per agent of the path users take with one of its parts switched off.

``bench_misses.py`` counts what an agent of each path costs; this script says
which parts of the path users take (``open_runtime`` with transcripts on) the
cost is in. Each part is replaced by a no-op in a child of its own, for the
count only (the agents still run their 10 turns to completion), and the child
runs under ``valgrind --tool=cachegrind`` as ``bench_misses.py``'s do: this
machine's L2 simulated, the cycle collector off, at two sizes, the difference
divided by the difference in agents. The parts:

- ``progress_facts``: the five facts a turn tells its agent's progress row
  (``ProgressFeed``: turn started, usage, tool started, tool ended, turn completed);
- ``kept_lines``: the lines the transcript flusher keeps for two looks, so that a
  deleted file's lines can go back to memory (``TranscriptFlusher.keep`` keeps
  nothing, and says it does);
- ``log_sink``: the session log's lines (``_Sink.emit``: the line is neither
  finished nor written);
- ``transcript_writes``: every ``write`` of a line to its transcript file
  (``DescriptorFile.write`` says all was written; the line is still made and kept).

A count moves by a few hundred misses an agent from one run to the next (the
helper process's timing): repeat it (``--repeat``) before reading a part's share.

    python bench/misses_without.py                          # every part, 200 and 400 agents
    python bench/misses_without.py --part progress_facts --quick
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_instructions  # the workload and its child's plumbing, beside this file
import bench_misses  # cachegrind's settings and its summary


@dataclass(frozen=True)
class Computed:
    """What a no-op returns when it depends on the call: ``of(*args)`` (a ``write`` says it
    wrote every byte it was given)."""

    of: Callable[..., object]


#: The parts that can be switched off: for each, the module, the class and its methods
#: that become no-ops (and what each returns instead: a value, or :class:`Computed`).
PARTS: Mapping[str, tuple[str, str, Mapping[str, object]]] = {
    "progress_facts": (
        "subagents.runtime._progress.facts",
        "ProgressFeed",
        dict.fromkeys(
            ("turn_started", "usage", "tool_started", "tool_ended", "turn_completed"), None
        ),
    ),
    "kept_lines": (
        "subagents.runtime._transcripts.flusher",
        "TranscriptFlusher",
        {"keep": True},  # says it keeps the line (the flusher runs for the whole count)
    ),
    "log_sink": ("subagents.runtime._logging", "_Sink", {"emit": None}),
    "transcript_writes": (
        "subagents.runtime._transcripts.file",
        "DescriptorFile",
        {"write": Computed(len)},  # every byte written, as far as the writer can tell
    ),
}
#: The path every variant runs.
PATH = "subagents"


def _returning(value: object) -> Callable[..., object]:
    """A method that does nothing and returns ``value`` (a :class:`Computed` one: what it
    computes from the call's arguments)."""

    def no_op(self: object, *args: object, **kwargs: object) -> object:
        return value.of(*args, **kwargs) if isinstance(value, Computed) else value

    return no_op


def switch_off(part: str, setattr_: Callable[[object, str, object], None] = setattr) -> None:
    """Replace ``part``'s methods by no-ops (``setattr_``: a test's ``monkeypatch.setattr``)."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; expected one of {', '.join(PARTS)}")
    module_name, class_name, methods = PARTS[part]
    owner = getattr(__import__(module_name, fromlist=[class_name]), class_name)
    for name, returns in methods.items():
        if not callable(getattr(owner, name, None)):
            raise ValueError(f"{class_name}.{name} is gone: update PARTS[{part!r}]")
        setattr_(owner, name, _returning(returns))


def child(part: str, agents: int) -> None:
    """Run ``agents`` agents of the path users take with ``part`` off (``none``: all on)."""
    if part != "none":
        switch_off(part)
    gc.disable()
    with tempfile.TemporaryDirectory(prefix="subagents-misses-without-") as root:
        bench_instructions.run_path(PATH, agents, Path(root))


def count(
    part: str,
    agents: int,
    *,
    valgrind: str | None = None,
    runner: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> bench_misses.Counts:
    """The counts of a child of ``agents`` agents with ``part`` off, under cachegrind."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", part, str(agents)]
    return bench_misses.under_cachegrind(
        command, f"{PATH} without {part}", agents, valgrind=valgrind, runner=runner
    )


def measure(
    parts: Sequence[str],
    small: int,
    large: int,
    *,
    repeat: int = 1,
    jobs: int = 2,
    counter: Callable[[str, int], bench_misses.Counts] = count,
) -> dict[str, list[dict[str, float]]]:
    """Per agent, ``repeat`` times, for the path with everything on (``none``) and with each
    of ``parts`` off."""
    if not 0 < small < large:
        raise ValueError(f"the sizes must be 0 < small < large (got {small} and {large})")
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1 (got {repeat})")
    variants = ("none", *parts)
    runs = [(part, n, r) for r in range(repeat) for part in variants for n in (small, large)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        counts = dict(zip(runs, pool.map(lambda run: counter(run[0], run[1]), runs), strict=True))
    return {
        part: [
            bench_misses.PerAgent(
                part, small, large, counts[part, small, r], counts[part, large, r]
            ).per_agent
            for r in range(repeat)
        ]
        for part in variants
    }


def _mean(runs: Sequence[Mapping[str, float]], name: str) -> float:
    return sum(run[name] for run in runs) / len(runs)


def table(results: Mapping[str, Sequence[Mapping[str, float]]]) -> str:
    """The Markdown table: each variant's instructions and L2 misses an agent (the mean of
    its counts, and their range when there are several), and what the part switched off
    cost (the difference of the means with everything on)."""
    base = results["none"]
    base_instructions = _mean(base, "instructions")
    base_misses = _mean(base, "last_level_misses")
    lines = [
        "| variant | instructions an agent | L2 misses an agent | the part's instructions "
        "| the part's misses |",
        "|---|---:|---:|---:|---:|",
    ]
    for part, runs in results.items():
        instructions = _mean(runs, "instructions")
        misses = _mean(runs, "last_level_misses")
        spread = ""
        if len(runs) > 1:
            low = min(run["last_level_misses"] for run in runs)
            high = max(run["last_level_misses"] for run in runs)
            spread = f" ({low:,.0f} to {high:,.0f})"
        cells = [
            "everything on" if part == "none" else f"without {part}",
            f"{instructions / 1e6:.3f}M",
            f"{misses:,.0f}{spread}",
            "",
            "",
        ]
        if part != "none":
            saved = base_instructions - instructions
            missed = base_misses - misses
            cells[3] = f"{saved / 1e3:,.0f}k ({saved / base_instructions:.1%})"
            cells[4] = f"{missed:,.0f} ({missed / base_misses:.1%})"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_instructions.add_size_arguments(parser)
    parser.add_argument(
        "--part", action="append", choices=list(PARTS), help="a part to switch off (repeatable)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="counts of each variant (default 1; a count moves)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="children at a time (default 2)")
    parser.add_argument("--json", type=Path, help="write the counts here")
    parser.add_argument("--child", nargs=2, metavar=("PART", "AGENTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child[0], int(args.child[1]))
        return 0
    small, large = bench_instructions.chosen_sizes(args)
    parts = args.part or list(PARTS)
    print(
        f"cache misses per agent of {PATH} with each of {', '.join(parts)} off, "
        f"at {small} and {large} agents, {args.repeat} count(s) each ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        results = measure(parts, small, large, repeat=args.repeat, jobs=args.jobs)
    except bench_instructions.CountError as exc:
        print(f"misses_without: {exc}", file=sys.stderr)
        return 1
    print(table(results))
    if args.json is not None:
        document = {"sizes": [small, large], "per_agent": results}
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
