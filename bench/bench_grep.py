"""Grep engines: Python's ``re`` (the baseline), RE2 (``google-re2``) and ``regex`` with a timeout.

Every pattern runs on every engine in the same process and the same run,
alternating engines repetition by repetition, over the same in-memory copy of
this repository's text files (repeated up to ``--megabytes``). ``re`` and
``regex`` search line by line, as Grep did; ``re2`` runs Grep's own search
(whole-line windows over the file's bytes, :func:`subagents.tools._builtin.grep._line_matches`).
It also checks, per engine, whether a worker thread matching one long text
lets the main thread run (the GIL is released), and how long the hostile
``(a+)+$`` takes (``re`` is not run on it: it would not come back).

    python bench/bench_grep.py               # about 4 MB, 5 repetitions
    python bench/bench_grep.py --quick       # about 1 MB, 3 repetitions
    python bench/bench_grep.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import re2
import regex

from subagents.tools._builtin.grep import _line_matches, _multiline_matches
from subagents.tools._builtin.regex import compile_linear

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("re", "re2", "regex")
#: ``regex``'s per-call timeout in this benchmark (Grep would take it from the deadline).
REGEX_TIMEOUT = 5.0

# (name, pattern, ignore case, multiline): what a model typically asks Grep for.
PATTERNS = [
    ("literal", "import", False, False),
    ("rare_literal", "ZebraQuokka", False, False),
    ("alternation", "TODO|FIXME|XXX|HACK", False, False),
    ("word", r"\bself\b", False, False),
    ("ignore_case", "error", True, False),
    ("class", r"[A-Z][a-z]+Error\b", False, False),
    ("anchored", r"^\s*def \w+\(", False, False),
    ("dot_star", r"async def .*ctx", False, False),
    ("multiline", r'def \w+\([^\n]*:\n\s+"""', False, True),
]


@dataclass
class Record:
    """One pattern on one engine; seconds over the whole corpus."""

    scenario: str
    impl: str
    n: int
    unit: str
    min: float
    median: float
    reps: int
    matched_lines: int


def corpus(megabytes: float) -> list[bytes]:
    """This repository's Python and Markdown files, repeated up to ``megabytes``."""
    files = [
        p.read_bytes()
        for folder in ("subagents", "tests", "bench")
        for p in sorted((ROOT / folder).rglob("*"))
        if p.suffix in (".py", ".md") and p.is_file()
    ]
    files += [p.read_bytes() for p in sorted(ROOT.glob("*.md"))]
    out: list[bytes] = []
    size = 0
    while size < megabytes * 1e6:
        for data in files:
            out.append(data)
            size += len(data)
    return out


def _lines(text: str) -> list[str]:
    lines = text.split("\n") if text else []
    if text.endswith("\n"):
        lines.pop()
    return lines


def _touched(matches: Iterator[Any]) -> int:
    """Lines the (non-overlapping) matches span, as Grep reports them."""
    return sum(m.group().count("\n", 0, max(len(m.group()) - 1, 0)) + 1 for m in matches)


def search_re(files: list[bytes], pattern: str, icase: bool, multiline: bool) -> int:
    """Grep as it was: ``re`` line by line (or over the whole text with re.M | re.S)."""
    flags = re.IGNORECASE if icase else 0
    if multiline:
        compiled = re.compile(pattern, flags | re.MULTILINE | re.DOTALL)
        return sum(_touched(compiled.finditer(d.decode())) for d in files)
    compiled = re.compile(pattern, flags)
    return sum(sum(1 for line in _lines(d.decode()) if compiled.search(line)) for d in files)


def search_regex(files: list[bytes], pattern: str, icase: bool, multiline: bool) -> int:
    """``regex`` line by line, every call bounded by a timeout."""
    flags = regex.IGNORECASE if icase else 0
    if multiline:
        compiled = regex.compile(pattern, flags | regex.MULTILINE | regex.DOTALL)
        return sum(_touched(compiled.finditer(d.decode(), timeout=REGEX_TIMEOUT)) for d in files)
    compiled = regex.compile(pattern, flags)
    return sum(
        sum(1 for line in _lines(d.decode()) if compiled.search(line, timeout=REGEX_TIMEOUT))
        for d in files
    )


def search_re2(files: list[bytes], pattern: str, icase: bool, multiline: bool) -> int:
    """Grep as it is: RE2 over whole-line windows of the file's bytes."""
    compiled = compile_linear(pattern, ignore_case=icase, lines=not multiline, dot_all=multiline)
    stop = threading.Event()
    total = 0
    for data in files:
        data.decode()  # Grep decodes every file for its lines; keep the work comparable
        if multiline:
            total += len(_multiline_matches(compiled, data, stop))
        else:
            total += len(_line_matches(compiled, data, stop)[0])
    return total


SEARCHES: dict[str, Callable[[list[bytes], str, bool, bool], int]] = {
    "re": search_re,
    "re2": search_re2,
    "regex": search_regex,
}


def run(files: list[bytes], reps: int) -> list[Record]:
    size = sum(len(d) for d in files)
    records = []
    for name, pattern, icase, multiline in PATTERNS:
        times: dict[str, list[float]] = {engine: [] for engine in ENGINES}
        found: dict[str, int] = {}
        for _ in range(reps):
            for engine in ENGINES:
                start = time.perf_counter()
                found[engine] = SEARCHES[engine](files, pattern, icase, multiline)
                times[engine].append(time.perf_counter() - start)
        for engine in ENGINES:
            records.append(
                Record(
                    scenario=name,
                    impl=engine,
                    n=size,
                    unit="s",
                    min=min(times[engine]),
                    median=statistics.median(times[engine]),
                    reps=reps,
                    matched_lines=found[engine],
                )
            )
    return records


def gil_check() -> dict[str, float]:
    """Main-thread loop turns per millisecond while a worker runs one long match."""
    text = ("ab" * 40 + "\n") * 20_000 + "!"
    needle = r"(?:a|b)+c"
    calls: dict[str, Callable[[], object]] = {
        "re": lambda: re.search(needle, text),
        "re2": lambda: re2.search(needle, text),
        "regex": lambda: regex.search(needle, text, timeout=REGEX_TIMEOUT),
    }
    out = {}
    for engine, call in calls.items():
        done = threading.Event()
        worker = threading.Thread(target=lambda c=call, d=done: (c(), d.set()))
        turns = 0
        start = time.perf_counter()
        worker.start()
        while not done.is_set():
            turns += 1
        worker.join()
        elapsed = time.perf_counter() - start
        out[engine] = round(turns / max(elapsed * 1000, 1e-9), 1)
        out[f"{engine}_call_ms"] = round(elapsed * 1000, 1)
    return out


def hostile() -> dict[str, str]:
    """Backtracking bombs over forty ``a`` and a ``!``: RE2 answers, ``regex`` may time out."""
    line = "a" * 40 + "!"
    out = {}
    for pattern in ("(a+)+$", "(a|aa)+$"):
        start = time.perf_counter()
        re2.search(pattern, line)
        out[f"re2 {pattern}"] = f"{(time.perf_counter() - start) * 1e6:.0f} us, no match"
        start = time.perf_counter()
        try:
            regex.search(pattern, line, timeout=1.0)
            out[f"regex {pattern}"] = f"{time.perf_counter() - start:.3f} s, no match"
        except TimeoutError:
            out[f"regex {pattern}"] = f"timed out after {time.perf_counter() - start:.2f} s"
        out[f"re {pattern}"] = "not run (exponential: hours, holding the GIL)"
    return out


def table(records: list[Record]) -> str:
    by = {(r.scenario, r.impl): r for r in records}
    rows = ["| pattern | re | re2 | re2 / re | regex | regex / re | lines (re, re2, regex) |"]
    rows.append("|---|---:|---:|---:|---:|---:|---|")
    for name, *_ in PATTERNS:
        base, fast, alt = by[name, "re"], by[name, "re2"], by[name, "regex"]
        rows.append(
            f"| {name} | {base.min:.3f} s | {fast.min:.3f} s | {fast.min / base.min:.2f}x | "
            f"{alt.min:.3f} s | {alt.min / base.min:.2f}x | "
            f"{base.matched_lines}, {fast.matched_lines}, {alt.matched_lines} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="about 1 MB, 3 repetitions")
    parser.add_argument("--megabytes", type=float, default=None, help="corpus size (4)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (5, or 3 with --quick)")
    parser.add_argument("--json", metavar="FILE", help="write the records as JSON")
    args = parser.parse_args(argv)
    reps = args.reps or (3 if args.quick else 5)
    files = corpus(args.megabytes or (1.0 if args.quick else 4.0))
    print(f"{len(files)} files, {sum(len(d) for d in files) / 1e6:.1f} MB, {reps} repetitions")
    records = run(files, reps)
    print(table(records))
    gil = gil_check()
    print("main-thread turns per ms during one long match:", gil)
    attack = hostile()
    print("over 40 a and '!':", attack)
    if args.json:
        versions = {
            "python": platform.python_version(),
            "google-re2": _version("google-re2"),
            "regex": regex.__version__,
            "platform": platform.platform(),
        }
        with open(args.json, "w") as f:
            json.dump(
                {
                    "versions": versions,
                    "records": [asdict(r) for r in records],
                    "gil_turns_per_ms": gil,
                    "hostile": attack,
                },
                f,
                indent=2,
            )
    return 0


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    sys.exit(main())
