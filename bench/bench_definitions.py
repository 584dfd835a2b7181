"""Definition loading benchmark: read the whole VoltAgent corpus, several times.

Loads ``<repo>/../shared/corpus/voltagent`` (10 plugins: 158 agent files, 157
of them listed by the manifests and loaded; the READMEs are not read) with
:func:`subagents.agents.load_tree`, the same call ``subagents agents validate
PATH`` makes, and prints the minimum and median wall-clock time of one full load.
The first load (imports, caches) is a warm-up and not counted.

    python bench/bench_definitions.py              # 20 repetitions
    python bench/bench_definitions.py --repeat 50
    python bench/bench_definitions.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from subagents.agents import FileKind, load_tree

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "voltagent"
#: The issue's bound: loading the whole corpus takes well under a second.
TARGET_SECONDS = 1.0


def load_once(corpus: Path) -> tuple[float, int, int, int]:
    """Load the corpus; return (seconds, agents, not-agents, errors)."""
    start = time.perf_counter()
    reports = load_tree(corpus)
    elapsed = time.perf_counter() - start
    agents = sum(len(r.definitions) for r in reports)
    not_agents = sum(1 for r in reports if r.kind is FileKind.NOT_AN_AGENT)
    errors = sum(len(r.errors) for r in reports)
    return elapsed, agents, not_agents, errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="timed loads (default 20)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus folder")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    load_once(args.corpus)  # warm-up
    timings: list[float] = []
    counts = (0, 0, 0)
    for _ in range(max(1, args.repeat)):
        elapsed, *found = load_once(args.corpus)
        timings.append(elapsed)
        counts = (found[0], found[1], found[2])
    agents, not_agents, errors = counts
    best, median = min(timings), statistics.median(timings)
    print(f"corpus: {args.corpus}")
    print(f"agents loaded: {agents}, not agents: {not_agents}, errors: {errors}")
    print(
        f"load whole corpus ({len(timings)} runs): min {best:.4f} s, median {median:.4f} s "
        f"(target < {TARGET_SECONDS:.1f} s) on Python {platform.python_version()}"
    )
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "scenario": "load_corpus",
                    "runs": len(timings),
                    "min_seconds": best,
                    "median_seconds": median,
                    "agents": agents,
                    "not_agents": not_agents,
                    "errors": errors,
                },
                indent=2,
            )
            + "\n"
        )
    return 0 if median < TARGET_SECONDS and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
