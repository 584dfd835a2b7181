"""Grep and Glob over the vendored corpus give the same matches as ``grep -r`` and ``find``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import trio

from subagents.tools import GlobTool, GrepTool, ToolContext, ToolRegistry

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"

ENV = {**os.environ, "LC_ALL": "C.UTF-8"}


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([GlobTool(max_results=100_000), GrepTool(default_head_limit=1_000_000)])


@pytest.fixture
def ctx(make_ctx: Any) -> ToolContext:
    return make_ctx(CORPUS)


async def run(*argv: str) -> set[str]:
    """Run a command in the corpus; its output lines, with a leading './' removed."""
    done = await trio.run_process(argv, cwd=CORPUS, capture_stdout=True, check=False, env=ENV)
    assert done.returncode in (0, 1), argv
    lines = done.stdout.decode().splitlines()
    return {line.removeprefix("./") for line in lines}


async def tool_lines(registry: ToolRegistry, ctx: ToolContext, name: str, **args: Any) -> set[str]:
    result = await registry.call(name, args, ctx)
    assert not result.is_error, result.content
    if result.content in ("No files found.", "No matches found."):
        return set()
    lines = result.content.splitlines()
    assert not any(line.startswith("[") for line in lines), lines[-1]
    return set(lines)


FIND = ("find", ".", "-name", ".git", "-prune", "-o")
DEPTH_2 = ("find", "./voltagent/categories", "-mindepth", "2", "-maxdepth", "2")
EITHER = ("-name", "*-engineer.md", "-o", "-name", "*-architect.md")


@pytest.mark.parametrize(
    ("pattern", "path", "find_args"),
    [
        ("**/*", None, (*FIND, "-type", "f", "-print")),
        ("**/*.md", None, (*FIND, "-type", "f", "-name", "*.md", "-print")),
        ("**/*.json", "voltagent", (*FIND, "-type", "f", "-name", "*.json", "-print")),
        (
            "**/.claude-plugin/*.json",
            None,
            (*FIND, "-type", "f", "-path", "*/.claude-plugin/*.json", "-print"),
        ),
        (
            "voltagent/categories/*/*.md",
            None,
            (*DEPTH_2, "-type", "f", "-name", "*.md"),
        ),
        (
            "**/*-{engineer,architect}.md",
            None,
            (*FIND, "-type", "f", "(", *EITHER, ")", "-print"),
        ),
        ("**/README.md", None, (*FIND, "-type", "f", "-name", "README.md", "-print")),
    ],
)
async def test_glob_matches_find(
    registry: ToolRegistry,
    ctx: ToolContext,
    pattern: str,
    path: str | None,
    find_args: tuple[str, ...],
) -> None:
    expected = await run(*find_args)
    if path is not None:
        expected = {p for p in expected if p.startswith(path + "/")}
    assert expected, "the comparison must not be vacuous"
    args: dict[str, Any] = {"pattern": pattern}
    if path is not None:
        args["path"] = path
    assert await tool_lines(registry, ctx, "Glob", **args) == expected


GREP_CASES = [
    ("model: (opus|sonnet|haiku)", {}, ()),
    ("^tools:", {}, ()),
    ("TODO|FIXME", {}, ()),
    ("kubernetes", {"-i": True}, ("-i",)),
    ('"name"', {"glob": "*.json"}, ("--include=*.json",)),
    ("[Ss]ecurity [a-z]+", {"glob": "*.md"}, ("--include=*.md",)),
]


@pytest.mark.parametrize(("pattern", "options", "grep_flags"), GREP_CASES)
async def test_grep_files_match_grep_r(
    registry: ToolRegistry,
    ctx: ToolContext,
    pattern: str,
    options: dict[str, Any],
    grep_flags: tuple[str, ...],
) -> None:
    expected = await run("grep", "-rlE", *grep_flags, "--", pattern, ".")
    found = await tool_lines(registry, ctx, "Grep", pattern=pattern, **options)
    assert found == expected
    assert expected or pattern == "TODO|FIXME"


@pytest.mark.parametrize(("pattern", "options", "grep_flags"), GREP_CASES)
async def test_grep_content_matches_grep_rn(
    registry: ToolRegistry,
    ctx: ToolContext,
    pattern: str,
    options: dict[str, Any],
    grep_flags: tuple[str, ...],
) -> None:
    expected = await run("grep", "-rnE", *grep_flags, "--", pattern, ".")
    found = await tool_lines(
        registry, ctx, "Grep", pattern=pattern, output_mode="content", **options
    )
    assert found == expected


@pytest.mark.parametrize(("pattern", "options", "grep_flags"), GREP_CASES)
async def test_grep_count_matches_grep_rc(
    registry: ToolRegistry,
    ctx: ToolContext,
    pattern: str,
    options: dict[str, Any],
    grep_flags: tuple[str, ...],
) -> None:
    counts = await run("grep", "-rcE", *grep_flags, "--", pattern, ".")
    expected = {line for line in counts if not line.endswith(":0")}
    found = await tool_lines(registry, ctx, "Grep", pattern=pattern, output_mode="count", **options)
    assert found == expected


async def test_grep_in_a_subdirectory_matches_grep_r(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    expected = await run("grep", "-rlE", "description:", "./voltagent/categories")
    found = await tool_lines(
        registry, ctx, "Grep", pattern="description:", path="voltagent/categories"
    )
    assert found == expected
    assert expected
