"""Workspace confinement: ``..``, absolute paths, symlinks (also made mid-run), special files."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
import trio

from subagents.tools import (
    ToolRegistry,
    UnsupportedFileError,
    Workspace,
    WorkspaceError,
    WorkspaceEscapeError,
    builtin_tools,
)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A workspace with an outside neighbour holding a secret, and symlinks in and out."""
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.txt").write_text("inside\n")
    (root / "sub" / "b.txt").write_text("deeper\n")
    (outside / "secret.txt").write_text("SECRET\n")
    (root / "link_out").symlink_to(outside)
    (root / "file_out").symlink_to(outside / "secret.txt")
    (root / "link_in").symlink_to(root / "sub")
    return {"root": root, "outside": outside}


@pytest.mark.parametrize(
    ("given", "parts"),
    [
        ("a.txt", ("a.txt",)),
        ("./a.txt", ("a.txt",)),
        ("sub/../a.txt", ("a.txt",)),
        ("sub/b.txt", ("sub", "b.txt")),
        ("link_in/b.txt", ("sub", "b.txt")),
        (".", ()),
        ("sub/..", ()),
        ("new/dir/file.txt", ("new", "dir", "file.txt")),
    ],
)
def test_paths_inside_resolve(tree: dict[str, Path], given: str, parts: tuple[str, ...]) -> None:
    resolved = Workspace(tree["root"]).resolve(given)
    assert resolved.parts == parts
    assert resolved.path == Path(os.path.realpath(tree["root"]), *parts)


def test_absolute_paths_inside_are_accepted(tree: dict[str, Path]) -> None:
    ws = Workspace(tree["root"])
    assert ws.resolve(str(tree["root"] / "sub" / "b.txt")).display == "sub/b.txt"


@pytest.mark.parametrize(
    "given",
    [
        "..",
        "../outside/secret.txt",
        "sub/../../outside",
        "link_out/secret.txt",
        "link_out",
        "file_out",
        "link_in/../../outside/secret.txt",
        "/etc/passwd",
        "~/x",
    ],
)
def test_paths_outside_are_refused(tree: dict[str, Path], given: str) -> None:
    with pytest.raises(WorkspaceEscapeError, match="outside the workspace"):
        Workspace(tree["root"]).resolve(given)


def test_absolute_path_to_the_outside_is_refused(tree: dict[str, Path]) -> None:
    with pytest.raises(WorkspaceEscapeError):
        Workspace(tree["root"]).resolve(str(tree["outside"] / "secret.txt"))


def test_a_sibling_with_a_common_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws-evil").mkdir()
    with pytest.raises(WorkspaceEscapeError):
        Workspace(tmp_path / "ws").resolve("../ws-evil/x")


@pytest.mark.parametrize("given", ["", "   ", "a\x00b"])
def test_malformed_paths_are_refused(tree: dict[str, Path], given: str) -> None:
    with pytest.raises(WorkspaceError):
        Workspace(tree["root"]).resolve(given)


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="not a directory"):
        Workspace(tmp_path / "missing").resolve("x")


def test_a_symlink_created_during_the_run_is_caught(tree: dict[str, Path]) -> None:
    ws = Workspace(tree["root"])
    assert ws.resolve("late/secret.txt").parts == ("late", "secret.txt")
    (tree["root"] / "late").symlink_to(tree["outside"])
    with pytest.raises(WorkspaceEscapeError):
        ws.resolve("late/secret.txt")


def test_a_directory_swapped_for_a_symlink_after_the_check_is_caught(
    tree: dict[str, Path],
) -> None:
    """The race the O_NOFOLLOW walk exists for: resolve, then swap, then open."""
    ws = Workspace(tree["root"])
    file_target = ws.resolve("sub/b.txt")
    dir_target = ws.resolve("sub")
    (tree["outside"] / "b.txt").write_text("SECRET\n")
    (tree["root"] / "sub").rename(tree["root"] / "sub-moved")
    (tree["root"] / "sub").symlink_to(tree["outside"])
    with pytest.raises(WorkspaceEscapeError, match="changed while it was being opened"):
        ws.open_file(file_target)
    with pytest.raises(WorkspaceEscapeError):
        ws.open_directory(dir_target)
    with pytest.raises(WorkspaceEscapeError):
        ws.replace_file(file_target, b"overwritten")
    assert (tree["outside"] / "b.txt").read_text() == "SECRET\n"


def test_a_file_swapped_for_a_symlink_after_the_check_is_caught(tree: dict[str, Path]) -> None:
    ws = Workspace(tree["root"])
    target = ws.resolve("a.txt")
    (tree["root"] / "a.txt").unlink()
    (tree["root"] / "a.txt").symlink_to(tree["outside"] / "secret.txt")
    with pytest.raises(WorkspaceEscapeError):
        ws.open_file(target)


def test_replace_file_replaces_a_symlink_instead_of_writing_through(
    tree: dict[str, Path],
) -> None:
    ws = Workspace(tree["root"])
    target = ws.resolve("a.txt")
    (tree["root"] / "a.txt").unlink()
    (tree["root"] / "a.txt").symlink_to(tree["outside"] / "secret.txt")
    with pytest.raises(WorkspaceEscapeError):
        ws.replace_file(target, b"x")
    assert (tree["outside"] / "secret.txt").read_text() == "SECRET\n"


def test_write_through_a_hard_link_does_not_touch_the_outside_file(
    tree: dict[str, Path],
) -> None:
    os.link(tree["outside"] / "secret.txt", tree["root"] / "hard.txt")
    ws = Workspace(tree["root"])
    ws.replace_file(ws.resolve("hard.txt"), b"replaced\n")
    assert (tree["outside"] / "secret.txt").read_text() == "SECRET\n"
    assert (tree["root"] / "hard.txt").read_text() == "replaced\n"


def test_replace_file_keeps_the_mode_and_leaves_no_temporary(tree: dict[str, Path]) -> None:
    script = tree["root"] / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o750)
    ws = Workspace(tree["root"])
    assert ws.replace_file(ws.resolve("run.sh"), b"echo 2\n") is False
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert sorted(p.name for p in tree["root"].iterdir()) == [
        "a.txt",
        "file_out",
        "link_in",
        "link_out",
        "run.sh",
        "sub",
    ]


def test_a_fifo_is_refused_without_blocking(tree: dict[str, Path]) -> None:
    os.mkfifo(tree["root"] / "pipe")
    ws = Workspace(tree["root"])
    with pytest.raises(UnsupportedFileError, match="FIFO"):
        ws.open_file(ws.resolve("pipe"))
    with pytest.raises(UnsupportedFileError, match="FIFO"):
        ws.replace_file(ws.resolve("pipe"), b"x")


def test_a_directory_is_not_a_file(tree: dict[str, Path]) -> None:
    ws = Workspace(tree["root"])
    with pytest.raises(UnsupportedFileError, match="directory"):
        ws.open_file(ws.resolve("sub"))
    with pytest.raises(UnsupportedFileError, match="directory"):
        ws.open_file(ws.resolve("."))


def test_walk_does_not_follow_symlinks(tree: dict[str, Path]) -> None:
    ws = Workspace(tree["root"])
    seen = [listing.display for listing in ws.walk(ws.resolve("."))]
    assert seen == [".", "sub"]


async def test_every_file_tool_refuses_the_fifo_quickly(
    tree: dict[str, Path], make_ctx: Any
) -> None:
    os.mkfifo(tree["root"] / "pipe")
    registry = ToolRegistry(builtin_tools())
    ctx = make_ctx(tree["root"])
    with trio.fail_after(5):
        read = await registry.call("Read", {"file_path": "pipe"}, ctx)
        edit = await registry.call(
            "Edit", {"file_path": "pipe", "old_string": "a", "new_string": "b"}, ctx
        )
        write = await registry.call("Write", {"file_path": "pipe", "content": "x"}, ctx)
        grep = await registry.call("Grep", {"pattern": "x", "path": "pipe"}, ctx)
        grep_all = await registry.call("Grep", {"pattern": "inside"}, ctx)
    for result in (read, edit, write, grep):
        assert result.is_error
        assert "FIFO" in result.content
    assert grep_all.content == "a.txt"


async def test_tools_report_escapes_as_errors(tree: dict[str, Path], make_ctx: Any) -> None:
    registry = ToolRegistry(builtin_tools())
    ctx = make_ctx(tree["root"])
    calls = [
        ("Read", {"file_path": "link_out/secret.txt"}),
        ("Read", {"file_path": "file_out"}),
        ("Write", {"file_path": "../outside/new.txt", "content": "x"}),
        ("Edit", {"file_path": "file_out", "old_string": "SECRET", "new_string": "x"}),
        ("LS", {"path": "link_out"}),
        ("Glob", {"pattern": "*", "path": "link_out"}),
        ("Grep", {"pattern": "SECRET", "path": "../outside"}),
    ]
    for name, args in calls:
        result = await registry.call(name, args, ctx)
        assert result.is_error, (name, args)
        assert "outside the workspace" in result.content
        assert "SECRET" not in result.content.replace("'SECRET'", "")
    assert sorted(p.name for p in tree["outside"].iterdir()) == ["secret.txt"]
    assert (tree["outside"] / "secret.txt").read_text() == "SECRET\n"


async def test_grep_and_glob_skip_symlinks_to_the_outside(
    tree: dict[str, Path], make_ctx: Any
) -> None:
    registry = ToolRegistry(builtin_tools())
    ctx = make_ctx(tree["root"])
    grep = await registry.call("Grep", {"pattern": "SECRET"}, ctx)
    assert grep.content == "No matches found."
    glob = await registry.call("Glob", {"pattern": "**/*"}, ctx)
    assert set(glob.content.splitlines()) == {"a.txt", "sub/b.txt"}
