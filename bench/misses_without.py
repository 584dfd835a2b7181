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
  nothing, and says it does).

    python bench/misses_without.py                          # every part, 200 and 400 agents
    python bench/misses_without.py --part progress_facts --quick
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_instructions  # the workload and its child's plumbing, beside this file
import bench_misses  # cachegrind's settings and its summary

#: The parts that can be switched off: for each, the module, the class and its methods
#: that become no-ops (what each returns instead).
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
        {"keep": "running"},  # says it keeps the line while it runs, as keep does
    ),
}
#: The path every variant runs.
PATH = "subagents"


def switch_off(part: str, setattr_: Callable[[object, str, object], None] = setattr) -> None:
    """Replace ``part``'s methods by no-ops (``setattr_``: a test's ``monkeypatch.setattr``)."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; expected one of {', '.join(PARTS)}")
    module_name, class_name, methods = PARTS[part]
    owner = getattr(__import__(module_name, fromlist=[class_name]), class_name)
    for name, returns in methods.items():
        if not callable(getattr(owner, name, None)):
            raise ValueError(f"{class_name}.{name} is gone: update PARTS[{part!r}]")
        if returns == "running":

            def no_op(self: Any, *args: object, **kwargs: object) -> object:
                return self._running

        else:

            def no_op(self: Any, *args: object, **kwargs: object) -> object:
                return None

        setattr_(owner, name, no_op)


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
    valgrind = valgrind or shutil.which("valgrind")
    if valgrind is None:
        raise bench_instructions.CountError(
            f"valgrind is not on PATH: {bench_instructions.INSTALL}."
        )
    with tempfile.TemporaryDirectory(prefix="subagents-misses-without-") as folder:
        command = [
            valgrind,
            "--tool=cachegrind",
            "--cache-sim=yes",
            f"--LL={bench_misses.LAST_LEVEL},{bench_misses.LAST_LEVEL_WAYS},{bench_misses.LINE}",
            f"--cachegrind-out-file={Path(folder) / 'cachegrind.out'}",
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            part,
            str(agents),
        ]
        report = bench_instructions.run_child(
            command,
            f"{PATH} without {part}",
            agents,
            "cachegrind",
            bench_misses.CHILD_TIMEOUT,
            runner,
        )
    return bench_misses.summary(report)


def measure(
    parts: Sequence[str],
    small: int,
    large: int,
    *,
    jobs: int = 2,
    counter: Callable[[str, int], bench_misses.Counts] = count,
) -> dict[str, dict[str, float]]:
    """Per agent, for the path with everything on (``none``) and with each of ``parts`` off."""
    if not 0 < small < large:
        raise ValueError(f"the sizes must be 0 < small < large (got {small} and {large})")
    runs = [(part, n) for part in ("none", *parts) for n in (small, large)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        counts = dict(zip(runs, pool.map(lambda run: counter(*run), runs), strict=True))
    return {
        part: {
            name: value / (large - small)
            for name, value in counts[part, large].minus(counts[part, small]).items()
        }
        for part in ("none", *parts)
    }


def table(results: Mapping[str, Mapping[str, float]]) -> str:
    """The Markdown table: each variant's instructions and L2 misses an agent, and what the
    part switched off cost (the difference with everything on)."""
    base = results["none"]
    lines = [
        "| variant | instructions an agent | L2 misses an agent | the part's instructions "
        "| the part's misses |",
        "|---|---:|---:|---:|---:|",
    ]
    for part, counts in results.items():
        cells = [
            "everything on" if part == "none" else f"without {part}",
            f"{counts['instructions'] / 1e6:.3f}M",
            f"{counts['last_level_misses']:,.0f}",
            "",
            "",
        ]
        if part != "none":
            instructions = base["instructions"] - counts["instructions"]
            misses = base["last_level_misses"] - counts["last_level_misses"]
            cells[3] = f"{instructions / 1e3:,.0f}k ({instructions / base['instructions']:.1%})"
            cells[4] = f"{misses:,.0f} ({misses / base['last_level_misses']:.1%})"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_instructions.add_size_arguments(parser)
    parser.add_argument(
        "--part", action="append", choices=list(PARTS), help="a part to switch off (repeatable)"
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
        f"at {small} and {large} agents ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        results = measure(parts, small, large, jobs=args.jobs)
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
