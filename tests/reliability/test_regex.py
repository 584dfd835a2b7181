"""Hostile patterns: a regex or glob that backtracks forever must not freeze the process.

Python's ``re`` holds the GIL while it backtracks, so ``(a+)+$`` over a line of
forty ``a`` froze every agent, ignored deadlines and Ctrl-C. The attack
scenarios run in a child process with a timeout, so that on a regressed build
they fail instead of hanging the suite; inside the child a sibling Trio task
counts its checkpoints while the tool runs (it can only count if the worker
thread lets go of the GIL) and a bounded ``trio.fail_after`` guards the call.
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import regex
import trio
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st

from subagents.tools import GrepTool, ToolContext, ToolRegistry, ToolResult

#: Generous: every scenario ends in well under a second on a healthy build.
CHILD_TIMEOUT = 60.0

_SCENARIO = r"""
import json, sys
from pathlib import Path

import trio

from subagents.tools import GlobTool, GrepTool, ToolContext, ToolRegistry

root, tool = sys.argv[1], sys.argv[2]
arguments, deadline = json.loads(sys.argv[3]), float(sys.argv[4])


async def main() -> None:
    registry = ToolRegistry([GrepTool(), GlobTool()])
    ctx = ToolContext(agent_id="attacker", depth=1, workspace_root=Path(root))
    ticks = 0
    outcome = {"finished": False}

    async def count() -> None:
        nonlocal ticks
        while True:
            await trio.lowlevel.checkpoint()
            ticks += 1

    start = trio.current_time()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(count)
            with trio.move_on_after(deadline):
                result = await registry.call(tool, arguments, ctx)
                outcome = {"finished": True, "content": result.content, "error": result.is_error}
            outcome["elapsed"] = trio.current_time() - start
            outcome["ticks_during_call"] = ticks
            nursery.cancel_scope.cancel()
    print(json.dumps(outcome))


trio.run(main)
"""


def run_isolated(root: Path, tool: str, arguments: dict[str, Any], deadline: float) -> Any:
    """Run one tool call under ``deadline`` in a child process; its outcome as a dict."""
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _SCENARIO,
                str(root),
                tool,
                json.dumps(arguments),
                str(deadline),
            ],
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{tool} {arguments} froze the process for {CHILD_TIMEOUT} s")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_catastrophic_grep_pattern_ends_within_the_deadline(tmp_path: Path) -> None:
    (tmp_path / "evil.txt").write_text("a" * 40 + "!\n" + "a" * 35 + "b\n")
    outcome = run_isolated(
        tmp_path, "Grep", {"pattern": "(a+)+$", "output_mode": "content"}, deadline=1.0
    )
    assert outcome["elapsed"] < 2.0
    assert outcome["ticks_during_call"] > 0
    if outcome["finished"]:  # a linear engine simply answers
        assert outcome["content"] == "No matches found."


def test_slow_grep_is_cut_by_the_deadline_while_trio_keeps_running(tmp_path: Path) -> None:
    # Random lines of a/b defeat RE2's DFA (it falls back to its NFA) and make Python's
    # `re` backtrack over every start: many seconds of work either way.
    (tmp_path / "big.txt").write_bytes(random_ab_lines(4000, 1000))
    outcome = run_isolated(tmp_path, "Grep", {"pattern": "(?:a|b)*a(?:a|b){200}c"}, deadline=0.3)
    assert not outcome["finished"]
    # Left alone, this search runs for over a minute; stopped, it ends within one window
    # of bounded work after the deadline. The margin is wide because the machine may be
    # loaded (this failed at 1.97 s against a 1.8 s bound with other suites running).
    assert outcome["elapsed"] < 0.3 + 5.0
    # The worker thread lets go of the GIL: the sibling ran all along.
    assert outcome["ticks_during_call"] > 100


def random_ab_lines(count: int, width: int) -> bytes:
    """``count`` lines of ``width`` random ``a``/``b``, the same on every run."""
    table = bytes(ord("ab"[byte & 1]) for byte in range(256))
    noise = random.Random(7).randbytes(count * width).translate(table)
    return b"".join(noise[i : i + width] + b"\n" for i in range(0, len(noise), width))


_INTERRUPTED = r"""
import signal
import sys
from pathlib import Path

import trio

# A test worker (pytest-xdist) ignores SIGINT, and a child inherits an ignored signal:
# Ctrl-C must reach this child as it reaches a program run from a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)

from subagents.tools import GrepTool, ToolContext, ToolRegistry


async def main() -> None:
    registry = ToolRegistry([GrepTool()])
    ctx = ToolContext(agent_id="attacker", depth=1, workspace_root=Path(sys.argv[1]))

    async def announce() -> None:
        await trio.sleep(0)
        await trio.sleep(0)  # the search has entered its worker thread by now
        print("searching", flush=True)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(announce)
        await registry.call("Grep", {"pattern": "(?:a|b)*a(?:a|b){200}c"}, ctx)
    print("finished", flush=True)


trio.run(main)
"""


def test_ctrl_c_ends_a_slow_grep_promptly(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(random_ab_lines(8000, 1000))
    child = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "searching\n"
        interrupted = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=CHILD_TIMEOUT)
        took = time.monotonic() - interrupted
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "KeyboardInterrupt" in stderr
    assert took < 2.0


def deep_tree(root: Path, depth: int) -> None:
    deep = root.joinpath(*["d"] * depth)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("needle\n")


@pytest.mark.parametrize(
    "pattern",
    ["**/" * 50 + "x.txt", "**/d/" * 25 + "**/x.txt", "**/" * 50 + "f.txt"],
)
def test_nested_globstars_return_quickly(tmp_path: Path, pattern: str) -> None:
    deep_tree(tmp_path, 40)
    outcome = run_isolated(tmp_path, "Glob", {"pattern": pattern}, deadline=5.0)
    assert outcome["finished"]
    assert outcome["elapsed"] < 2.0
    if pattern.endswith("f.txt"):
        assert outcome["content"] == "/".join(["d"] * 40) + "/f.txt"
    else:
        assert outcome["content"] == "No files found."


def test_nested_globstars_in_a_grep_filter_return_quickly(tmp_path: Path) -> None:
    deep_tree(tmp_path, 40)
    outcome = run_isolated(
        tmp_path, "Grep", {"pattern": "needle", "glob": "**/d/" * 25 + "**/x.txt"}, deadline=5.0
    )
    assert outcome["finished"]
    assert outcome["elapsed"] < 2.0
    assert outcome["content"] == "No matches found."


# -- agreement with Python's re where both accept a pattern ------------------------------

_ATOMS = st.sampled_from(
    [
        *("a", "b", "c", "ab", " ", ".", "[ab]", "[^a]", "[a-c]", "1", "_", "-", r"\."),
        *(r"\w", r"\d", r"\s", r"\W", r"\b", "^", "$", r"\A", r"\Z"),
    ]
)


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    """Small regexes over the files' alphabet, with groups, alternation and quantifiers."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 2 and draw(st.integers(0, 4)) == 0:
            inner = draw(patterns(depth + 1))
            if draw(st.booleans()):
                inner += "|" + draw(patterns(depth + 1))
            atom = f"({inner})" if draw(st.booleans()) else f"(?:{inner})"
        else:
            atom = draw(_ATOMS)
        quantifier = draw(st.sampled_from(["", "", "", "*", "+", "?", "{1,2}", "*?", "+?"]))
        if quantifier and atom in ("^", "$", r"\b", r"\A", r"\Z"):
            quantifier = ""
        parts.append(atom + quantifier)
    return "".join(parts)


_TEXT = st.text(alphabet="ab c1_.-\t", max_size=12)
_FILES = st.lists(st.lists(_TEXT, max_size=5), min_size=1, max_size=3)
_FLAGS = st.fixed_dictionaries({"-i": st.booleans(), "multiline": st.booleans()})


def split_lines(text: str) -> list[str]:
    """A file's lines as Grep counts them: none in an empty file, no line after a final newline."""
    lines = text.split("\n") if text else []
    if text.endswith("\n"):
        lines.pop()
    return lines


#: How long the reference engine may search one file before the example is dropped.
ORACLE_SECONDS = 2.0


def expected_lines(pattern: str, text: str, ignore_case: bool, multiline: bool) -> list[int]:
    """The line indices a backtracking engine finds, searched as Grep documents it.

    The reference is the ``regex`` module in its ``re``-compatible mode (V0),
    because it takes a ``timeout``: Python's ``re`` cannot be stopped, and a
    drawn pattern such as ``\\w+(\\W?.*?|c+\\w?\\s*?)*[^a]{1,2}\\A`` backtracks for
    hours on 30 characters (pytest-timeout's signal cannot interrupt it: CI hung
    there). An example the reference cannot finish in time is dropped.
    """
    flags = regex.IGNORECASE if ignore_case else 0
    lines = split_lines(text)
    try:
        if not multiline:
            compiled = regex.compile(pattern, flags | regex.VERSION0)
            return [
                i for i, line in enumerate(lines) if compiled.search(line, timeout=ORACLE_SECONDS)
            ]
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        compiled = regex.compile(pattern, flags | regex.MULTILINE | regex.DOTALL | regex.VERSION0)
        # Grep's iteration: after an empty match the next search starts one character on.
        # (finditer, since Python 3.7, may also take a longer match at that same position:
        # \ba*(?:.a.a* $)*? on "1a\n " is empty at 0, then "1a\n " from 0 again.)
        found_all = []
        pos = 0
        while pos <= len(text):
            found = compiled.search(text, pos, timeout=ORACLE_SECONDS)
            if found is None:
                break
            found_all.append(found)
            pos = found.end() if found.end() > found.start() else found.end() + 1
    except TimeoutError:
        reject()
    touched: set[int] = set()
    for found in found_all:
        first = max(i for i, s in enumerate(starts) if s <= found.start())
        end = max(found.end() - 1, found.start())
        last = max(i for i, s in enumerate(starts) if s <= end)
        touched.update(range(first, last + 1))
    return sorted(i for i in touched if i < len(lines))


def grep_content(root: Path, arguments: dict[str, Any]) -> ToolResult:
    registry = ToolRegistry([GrepTool()])
    ctx = ToolContext(agent_id="hypothesis", depth=1, workspace_root=root)

    async def go() -> ToolResult:
        with trio.fail_after(20):
            return await registry.call("Grep", arguments, ctx)

    return trio.run(go)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(pattern=patterns(), files=_FILES, flags=_FLAGS, trailing=st.booleans())
# an empty match, then a longer one from the same place (found in CI, 2026-11-28)
@example(
    pattern=r"\ba*a*(?:(?:a)|.a(?:.a* $))*?",
    files=[["1a", " "]],
    flags={"-i": False, "multiline": True},
    trailing=False,
)
def test_grep_agrees_with_python_re(
    tmp_path_factory: pytest.TempPathFactory,
    pattern: str,
    files: list[list[str]],
    flags: dict[str, bool],
    trailing: bool,
) -> None:
    try:
        re.compile(pattern)
    except re.error:
        return
    root = tmp_path_factory.mktemp("agree")
    texts = {}
    for index, lines in enumerate(files):
        text = "\n".join(lines) + ("\n" if trailing and lines else "")
        texts[f"f{index}.txt"] = text
        (root / f"f{index}.txt").write_text(text)
    result = grep_content(root, {"pattern": pattern, "output_mode": "content", "-n": True, **flags})
    if result.is_error:
        # Only a pattern RE2 refuses may fail, and it must say so.
        assert result.content.startswith(("Unsupported regular", "Invalid regular")), result
        return
    want = []
    for name in sorted(texts):
        text = texts[name]
        lines = split_lines(text)
        for i in expected_lines(pattern, text, flags["-i"], flags["multiline"]):
            want.append(f"{name}:{i + 1}:{lines[i]}")
    got = [] if result.content == "No matches found." else result.content.split("\n")
    assert sorted(got) == sorted(want), (pattern, texts)
