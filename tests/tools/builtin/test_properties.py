"""Property tests: random arguments never raise out of a tool, random paths never escape.

Hypothesis drives synchronous tests; each example runs its tool calls with ``trio.run``.
The workspace is a temporary tree with symlinks pointing in and out, ``..`` links,
a FIFO, and an outside directory holding a sentinel that must never be read,
listed, modified or added to.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents.tools import (
    ApprovalMode,
    ApprovalRouter,
    ToolContext,
    ToolRegistry,
    ToolResult,
    Workspace,
    WorkspaceError,
    builtin_tools,
    input_schema,
)

SENTINEL = "S3CR3T-0UTSIDE"
OUTSIDE_MARKER = "outside-only-marker.txt"

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hypothesis-tree")
    root = base / "ws"
    outside = base / "outside"
    (root / "sub" / "deep").mkdir(parents=True)
    outside.mkdir()
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "sub" / "b.txt").write_text("inside text\n")
    (root / "sub" / "deep" / "c.md").write_text("# deep\n")
    (root / "bin.dat").write_bytes(b"\x00\x01\x02")
    os.mkfifo(root / "fifo")
    (outside / "secret.txt").write_text(SENTINEL + "\n")
    (outside / OUTSIDE_MARKER).write_text(SENTINEL + "\n")
    (root / "link_out").symlink_to(outside)
    (root / "file_out").symlink_to(outside / "secret.txt")
    (root / "link_in").symlink_to(root / "sub")
    (root / "sub" / "dotdot").symlink_to("..")
    (root / "sub" / "up2").symlink_to("../..")
    (root / "sub" / "deep" / "rel_out").symlink_to("../../../outside")
    (root / "dangling").symlink_to(root / "missing")
    return {"root": root, "outside": outside}


def outside_state(outside: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(outside.iterdir())}


SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "sub",
        "deep",
        "link_out",
        "link_in",
        "file_out",
        "dotdot",
        "up2",
        "rel_out",
        "dangling",
        "planted",
        "a.txt",
        "b.txt",
        "c.md",
        "secret.txt",
        OUTSIDE_MARKER,
        "outside",
        "ws",
        "fifo",
        "bin.dat",
        "new",
        "~",
        "*",
        "**",
    ]
)


@st.composite
def paths(draw: st.DrawFn, tree: dict[str, Path]) -> str:
    body = "/".join(draw(st.lists(SEGMENTS, min_size=1, max_size=6)))
    prefix = draw(st.sampled_from(["", "", "./", "/", f"{tree['root']}/", f"{tree['outside']}/"]))
    return prefix + body


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def marker_inside(root: Path) -> bool:
    """Whether an earlier Write created an entry with the outside marker's name inside."""
    return any(
        OUTSIDE_MARKER in dirs or OUTSIDE_MARKER in files for _, dirs, files in os.walk(root)
    )


def check_no_escape(result: ToolResult, arguments: Any, root: Path) -> None:
    """No outside content, and no outside name unless the arguments or the tree explain it."""
    assert isinstance(result, ToolResult)
    assert "failed unexpectedly" not in result.content, result.content
    assert SENTINEL not in result.content
    if any(OUTSIDE_MARKER in given for given in strings_in(arguments)) or marker_inside(root):
        return
    assert OUTSIDE_MARKER not in result.content


def make_ctx(root: Path, mode: ApprovalMode = ApprovalMode.AUTO_APPROVE) -> ToolContext:
    return ToolContext(
        agent_id="hypothesis",
        depth=1,
        workspace_root=root,
        approver=ApprovalRouter("hypothesis", mode),
    )


def call(name: str, args: Any, ctx: ToolContext) -> ToolResult:
    registry = ToolRegistry(builtin_tools())

    async def go() -> ToolResult:
        with trio.fail_after(20):
            return await registry.call(name, args, ctx)

    return trio.run(go)


# -- random paths never escape --------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_resolve_never_leaves_the_root(tree: dict[str, Path], data: st.DataObject) -> None:
    path = data.draw(paths(tree))
    root = os.path.realpath(tree["root"])
    try:
        resolved = Workspace(tree["root"]).resolve(path)
    except WorkspaceError:
        return
    real = os.path.realpath(resolved.path)
    assert os.path.commonpath([real, root]) == root
    assert ".." not in resolved.parts


@settings(SETTINGS, max_examples=150)
@given(
    data=st.data(),
    tool=st.sampled_from(["Read", "LS", "Glob", "Grep", "Write", "Edit"]),
    plant=st.booleans(),
)
def test_file_tools_never_touch_the_outside(
    tree: dict[str, Path], data: st.DataObject, tool: str, plant: bool
) -> None:
    root, outside = tree["root"], tree["outside"]
    # A symlink that appears while the agent is running (unless an earlier example's
    # Write or Edit made something of that name: the tree is shared by the examples).
    if plant and not os.path.lexists(root / "planted"):
        (root / "planted").symlink_to(outside)
    before = outside_state(outside)
    path = data.draw(paths(tree))
    args: dict[str, Any] = {
        "Read": {"file_path": path},
        "LS": {"path": path},
        "Glob": {"pattern": data.draw(st.sampled_from(["**/*", "*", "**/*.txt"])), "path": path},
        "Grep": {"pattern": "S3CR3T|0UTSIDE|text", "path": path, "output_mode": "content"},
        "Write": {"file_path": path, "content": "PWNED\n"},
        "Edit": {"file_path": path, "old_string": "alpha", "new_string": "PWNED"},
    }[tool]
    result = call(tool, args, make_ctx(root))
    check_no_escape(result, args, root)
    assert outside_state(outside) == before
    assert sorted(p.name for p in outside.parent.iterdir()) == ["outside", "ws"]
    if tool == "Glob" and not result.is_error:
        real_root = os.path.realpath(root)
        for line in result.content.splitlines():
            if line.startswith("[") or line == "No files found.":
                continue
            real = os.path.realpath(os.path.join(real_root, line))
            assert os.path.commonpath([real, real_root]) == real_root


# -- random arguments give a result or a tool error -------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


def arguments_for(tool_name: str, tree: dict[str, Path]) -> st.SearchStrategy[Any]:
    """Dicts keyed mostly by the tool's own fields (sometimes unknown ones), or any JSON."""
    tool = next(t for t in builtin_tools() if t.name == tool_name)
    fields = sorted(input_schema(tool.arguments_type)["properties"])
    keys = st.sampled_from([*fields, "bogus"])
    values = JSON | paths(tree) | st.integers(min_value=0, max_value=5000) | st.booleans()
    shaped = st.dictionaries(keys, values, max_size=len(fields) + 1)
    raw = st.text(max_size=40) | JSON
    return st.one_of(shaped, shaped, raw)


@pytest.mark.parametrize("tool_name", ["Read", "Write", "Edit", "Glob", "Grep", "LS", "Bash"])
@settings(SETTINGS, max_examples=60)
@given(data=st.data())
def test_random_arguments_never_raise(
    tree: dict[str, Path], tool_name: str, data: st.DataObject
) -> None:
    before = outside_state(tree["outside"])
    arguments = data.draw(arguments_for(tool_name, tree))
    # Bash is denied here so random text is never executed; its safe commands run below.
    mode = ApprovalMode.SUPPRESS if tool_name == "Bash" else ApprovalMode.AUTO_APPROVE
    result = call(tool_name, arguments, make_ctx(tree["root"], mode))
    check_no_escape(result, arguments, tree["root"])
    assert outside_state(tree["outside"]) == before


@settings(SETTINGS, max_examples=25)
@given(
    command=st.sampled_from(
        [
            "echo hi",
            "true",
            "false",
            "printf '%s' abc",
            "exit 7",
            "echo $((6 * 7))",
            "cat missing-file",
            "ls",
            "printf 'a\\0b'",
            "head -c 5000 /dev/zero",
        ]
    ),
    timeout=st.none() | st.integers(min_value=1, max_value=5000),
    description=st.none() | st.text(max_size=50),
)
def test_bash_with_random_options_gives_a_result(
    tree: dict[str, Path], command: str, timeout: int | None, description: str | None
) -> None:
    args: dict[str, Any] = {"command": command}
    if timeout is not None:
        args["timeout"] = timeout
    if description is not None:
        args["description"] = description
    result = call("Bash", args, make_ctx(tree["root"]))
    assert isinstance(result, ToolResult)
    assert "failed unexpectedly" not in result.content
    assert set(result.details) >= {"exit_code", "timed_out", "truncated"}
