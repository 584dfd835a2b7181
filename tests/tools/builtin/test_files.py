"""The built-in file tools: Read, Write, Edit, Glob, Grep and LS."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from subagents.tools import (
    GlobTool,
    GrepTool,
    LSTool,
    ReadTool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    builtin_tools,
)


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(builtin_tools())


@pytest.fixture
def ctx(make_ctx: Any) -> ToolContext:
    return make_ctx()


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return await registry.call(name, args, ctx)


# -- Read -----------------------------------------------------------------------------


async def test_read_numbers_lines(registry: ToolRegistry, ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\r\ngamma")
    result = await call(registry, ctx, "Read", file_path="f.txt")
    assert result.content == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert not result.is_error


async def test_read_offset_and_limit(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await call(registry, ctx, "Read", file_path="f.txt", offset=4, limit=3)
    lines = result.content.splitlines()
    assert lines[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert lines[3] == "[showing lines 4-6; the file continues: pass offset=7 to read more]"
    assert result.details["more"] is True
    tail = await call(registry, ctx, "Read", file_path="f.txt", offset=9)
    assert tail.content == "     9\tline 9\n    10\tline 10"
    zero = await call(registry, ctx, "Read", file_path="f.txt", offset=0, limit=1)
    assert zero.content.startswith("     1\tline 1\n[showing lines 1-1")


async def test_read_past_the_end(registry: ToolRegistry, ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    result = await call(registry, ctx, "Read", file_path="f.txt", offset=5)
    assert result.is_error
    assert "has 2 lines; offset 5 is past the end" in result.content


async def test_read_empty_binary_and_missing(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert (await call(registry, ctx, "Read", file_path="empty")).content == "'empty' is empty."
    binary = await call(registry, ctx, "Read", file_path="image.png")
    assert "binary file (16 bytes)" in binary.content
    missing = await call(registry, ctx, "Read", file_path="nope.txt")
    assert missing == ToolResult.error("'nope.txt' does not exist.")
    directory = await call(registry, ctx, "Read", file_path=".")
    assert directory.is_error
    assert "directory" in directory.content


async def test_read_accepts_an_absolute_path_inside(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    result = await call(registry, ctx, "Read", file_path=str(tmp_path / "f.txt"))
    assert result.content == "     1\tx"


async def test_read_cuts_long_lines_and_caps_output(tmp_path: Path, make_ctx: Any) -> None:
    (tmp_path / "wide.txt").write_text("y" * 30 + "\n" + "w" * 500 + "\n" + "short\n" * 100)
    tool = ToolRegistry([ReadTool(max_line_chars=10, max_output_chars=200)])
    result = await tool.call("Read", {"file_path": "wide.txt"}, make_ctx())
    lines = result.content.splitlines()
    assert lines[0] == "     1\t" + "y" * 10 + "... [20 more characters]"
    assert lines[1] == "     2\t" + "w" * 10 + " ... [line cut]"
    assert lines[2] == "     3\tshort"
    assert len(result.content) < 300
    assert lines[-1].startswith("[showing lines 1-")
    assert result.details["more"] is True


async def test_read_of_a_huge_file_is_bounded(tmp_path: Path, make_ctx: Any) -> None:
    """A 32 MB one-line file and a 300 000-line file: a window comes back, memory stays small."""
    one_line = tmp_path / "one-line.txt"
    with one_line.open("wb") as f:
        f.write(b"z" * (32 * 1024 * 1024))
    many = tmp_path / "many.txt"
    with many.open("wb") as f:
        f.write(b"row\n" * 300_000)
    registry = ToolRegistry([ReadTool()])
    tracemalloc.start()
    try:
        wide = await registry.call("Read", {"file_path": "one-line.txt"}, make_ctx())
        tall = await registry.call("Read", {"file_path": "many.txt"}, make_ctx())
        late = await registry.call("Read", {"file_path": "many.txt", "offset": 299_999}, make_ctx())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024
    assert wide.content.startswith("     1\t" + "z" * 2000 + " ... [line cut]")
    assert len(wide.content) < 3000
    assert tall.details["last_line"] == 2000
    assert late.content == "299999\trow\n300000\trow"


# -- Write and Edit ---------------------------------------------------------------------


async def test_write_creates_parents_and_overwrites(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    created = await call(registry, ctx, "Write", file_path="a/b/c.txt", content="héllo\n")
    assert created.content == "Created 'a/b/c.txt' (7 bytes)."
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "héllo\n"
    again = await call(registry, ctx, "Write", file_path="a/b/c.txt", content="bye")
    assert again.content == "Wrote 'a/b/c.txt' (3 bytes)."
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "bye"


async def test_write_refuses_unencodable_text(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    as_text = await registry.call("Write", '{"file_path": "s.txt", "content": "\\ud800"}', ctx)
    as_dict = await registry.call("Write", {"file_path": "s.txt", "content": "\ud800"}, ctx)
    assert as_text.is_error
    assert as_text.content.startswith("Invalid arguments for tool 'Write'")
    assert as_dict.is_error
    assert "surrogates not allowed" in as_dict.content
    assert not (tmp_path / "s.txt").exists()


async def test_write_onto_a_directory_fails(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "d").mkdir()
    result = await call(registry, ctx, "Write", file_path="d", content="x")
    assert result.is_error
    assert "directory" in result.content


async def test_edit_replaces_a_unique_string(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "code.py").write_text("def f():\n    return 1\n")
    result = await call(
        registry, ctx, "Edit", file_path="code.py", old_string="return 1", new_string="return 2"
    )
    assert result.content == "Replaced 1 occurrence in 'code.py'."
    assert (tmp_path / "code.py").read_text() == "def f():\n    return 2\n"


async def test_edit_refuses_an_ambiguous_string(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "x.txt").write_text("a a a")
    result = await call(registry, ctx, "Edit", file_path="x.txt", old_string="a", new_string="b")
    assert result.is_error
    assert "occurs 3 times" in result.content
    assert (tmp_path / "x.txt").read_text() == "a a a"
    everything = await call(
        registry, ctx, "Edit", file_path="x.txt", old_string="a", new_string="b", replace_all=True
    )
    assert everything.content == "Replaced 3 occurrences in 'x.txt'."
    assert (tmp_path / "x.txt").read_text() == "b b b"


async def test_edit_errors(registry: ToolRegistry, ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("text\n")
    (tmp_path / "bin").write_bytes(b"a\x00b")
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    cases = {
        ("t.txt", "missing", "x"): "was not found",
        ("t.txt", "text", "text"): "identical",
        ("bin", "a", "c"): "binary",
        ("latin1.txt", "caf", "x"): "not valid UTF-8",
        ("nope.txt", "a", "b"): "does not exist",
    }
    for (path, old, new), expected in cases.items():
        result = await call(registry, ctx, "Edit", file_path=path, old_string=old, new_string=new)
        assert result.is_error, path
        assert expected in result.content, (path, result.content)
    empty = await call(registry, ctx, "Edit", file_path="t.txt", old_string="", new_string="x")
    assert empty.is_error
    assert "$.old_string" in empty.content


async def test_edit_refuses_files_over_the_size_limit(tmp_path: Path, make_ctx: Any) -> None:
    from subagents.tools import EditTool

    (tmp_path / "big.txt").write_text("x" * 100)
    registry = ToolRegistry([EditTool(max_file_bytes=10)])
    result = await registry.call(
        "Edit", {"file_path": "big.txt", "old_string": "x", "new_string": "y"}, make_ctx()
    )
    assert result.is_error
    assert "too large to edit" in result.content


# -- MultiEdit --------------------------------------------------------------------------


async def test_multiedit_applies_edits_in_order_each_on_the_last_result(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    """Claude Code's MultiEdit: in sequence, atomically (code.claude.com tools reference)."""
    (tmp_path / "code.py").write_text("a = 1\nb = 1\n")
    edits = [
        {"old_string": "a = 1", "new_string": "a = 2"},
        {"old_string": "a = 2\nb", "new_string": "a = 2\nc"},
        {"old_string": "1", "new_string": "3", "replace_all": True},
    ]
    result = await call(registry, ctx, "MultiEdit", file_path="code.py", edits=edits)
    assert result.content == "Applied 3 edits (3 replacements) to 'code.py'."
    assert (tmp_path / "code.py").read_text() == "a = 2\nc = 3\n"


async def test_multiedit_writes_nothing_if_one_edit_fails(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "x.txt").write_text("one two two")
    edits = [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "two", "new_string": "2"},
    ]
    result = await call(registry, ctx, "MultiEdit", file_path="x.txt", edits=edits)
    assert result.is_error
    assert "Edit 2 of 2: old_string occurs 2 times" in result.content
    assert "Nothing was written." in result.content
    assert (tmp_path / "x.txt").read_text() == "one two two"
    none = await call(registry, ctx, "MultiEdit", file_path="x.txt", edits=[])
    assert none.is_error


# -- Glob -------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {
        "README.md": "# readme\nTODO: write docs\n",
        "src/app.py": "import os\n\ndef main():\n    return 'todo'\n",
        "src/app.ts": "const x = 1; // TODO\n",
        "src/ui/view.tsx": "export const View = () => null;\n",
        "src/ui/.hidden.py": "SECRET_HIDDEN = True\n",
        "docs/guide.md": "Guide\nline two\nTODO later\nend\n",
        ".git/config": "TODO in git\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    stamp = 1_700_000_000
    for offset, name in enumerate(sorted(files)):
        os.utime(tmp_path / name, (stamp + offset, stamp + offset))
    return tmp_path


async def glob(registry: ToolRegistry, ctx: ToolContext, pattern: str, **extra: Any) -> list[str]:
    result = await call(registry, ctx, "Glob", pattern=pattern, **extra)
    assert not result.is_error, result.content
    return [] if result.content == "No files found." else result.content.splitlines()


async def test_glob_patterns(registry: ToolRegistry, ctx: ToolContext, project: Path) -> None:
    assert sorted(await glob(registry, ctx, "**/*.py")) == ["src/app.py", "src/ui/.hidden.py"]
    assert await glob(registry, ctx, "*.md") == ["README.md"]
    assert sorted(await glob(registry, ctx, "src/**/*.{ts,tsx}")) == [
        "src/app.ts",
        "src/ui/view.tsx",
    ]
    assert await glob(registry, ctx, "src/ap?.py") == ["src/app.py"]
    assert await glob(registry, ctx, "src/app.[pt]s") == ["src/app.ts"]
    assert await glob(registry, ctx, "**/config") == []
    assert await glob(registry, ctx, "*.py", path="src") == ["src/app.py"]
    assert await glob(registry, ctx, "nothing*") == []


async def test_glob_lists_newest_first(
    registry: ToolRegistry, ctx: ToolContext, project: Path
) -> None:
    assert await glob(registry, ctx, "**/*.md") == ["docs/guide.md", "README.md"]
    os.utime(project / "README.md", (1_800_000_000, 1_800_000_000))
    assert await glob(registry, ctx, "**/*.md") == ["README.md", "docs/guide.md"]


async def test_glob_caps_results(project: Path, make_ctx: Any) -> None:
    registry = ToolRegistry([GlobTool(max_results=2)])
    result = await registry.call("Glob", {"pattern": "**/*"}, make_ctx())
    lines = result.content.splitlines()
    assert len(lines) == 3
    assert lines[-1] == "[4 more files not shown; use a narrower pattern or path]"
    assert result.details["count"] == 6


@pytest.mark.parametrize("pattern", ["/etc/*", "../*", "a/../../b", "[z-a]"])
async def test_glob_refuses_bad_patterns(
    registry: ToolRegistry, ctx: ToolContext, pattern: str
) -> None:
    result = await call(registry, ctx, "Glob", pattern=pattern)
    assert result.is_error


async def test_glob_path_must_be_a_directory(
    registry: ToolRegistry, ctx: ToolContext, project: Path
) -> None:
    result = await call(registry, ctx, "Glob", pattern="*", path="README.md")
    assert result.is_error
    assert "not a directory" in result.content


# -- Grep -------------------------------------------------------------------------------


async def grep(registry: ToolRegistry, ctx: ToolContext, **args: Any) -> list[str]:
    result = await call(registry, ctx, "Grep", **args)
    assert not result.is_error, result.content
    return [] if result.content.startswith("No matches") else result.content.splitlines()


async def test_grep_output_modes(registry: ToolRegistry, ctx: ToolContext, project: Path) -> None:
    assert await grep(registry, ctx, pattern="TODO") == [
        "README.md",
        "docs/guide.md",
        "src/app.ts",
    ]
    assert await grep(registry, ctx, pattern="TODO", output_mode="content") == [
        "README.md:2:TODO: write docs",
        "docs/guide.md:3:TODO later",
        "src/app.ts:1:const x = 1; // TODO",
    ]
    assert await grep(registry, ctx, pattern="e", output_mode="count", path="docs") == [
        "docs/guide.md:4"
    ]
    assert await grep(
        registry, ctx, pattern="TODO", output_mode="content", path="README.md", **{"-n": False}
    ) == ["README.md:TODO: write docs"]


async def test_grep_options(registry: ToolRegistry, ctx: ToolContext, project: Path) -> None:
    assert await grep(registry, ctx, pattern="todo", **{"-i": True}) == [
        "README.md",
        "docs/guide.md",
        "src/app.py",
        "src/app.ts",
    ]
    assert await grep(registry, ctx, pattern="todo|TODO", glob="*.py") == ["src/app.py"]
    assert await grep(registry, ctx, pattern=".", glob="src/ui/*") == [
        "src/ui/.hidden.py",
        "src/ui/view.tsx",
    ]
    assert await grep(registry, ctx, pattern="TODO", head_limit=1) == [
        "README.md",
        "[output limited to 1 lines; raise head_limit or narrow the search]",
    ]
    assert await grep(registry, ctx, pattern="def main\\(\\):\\n    return", multiline=True) == [
        "src/app.py"
    ]
    assert await grep(
        registry,
        ctx,
        pattern="main\\(\\):\\n    return",
        multiline=True,
        output_mode="content",
    ) == ["src/app.py:3:def main():", "src/app.py:4:    return 'todo'"]


async def test_grep_context_lines(registry: ToolRegistry, ctx: ToolContext, project: Path) -> None:
    assert await grep(
        registry, ctx, pattern="TODO", output_mode="content", path="docs", **{"-C": 1}
    ) == [
        "docs/guide.md-2-line two",
        "docs/guide.md:3:TODO later",
        "docs/guide.md-4-end",
    ]
    assert await grep(
        registry, ctx, pattern="^(Guide|end)$", output_mode="content", path="docs", **{"-A": 0}
    ) == ["docs/guide.md:1:Guide", "--", "docs/guide.md:4:end"]
    assert await grep(
        registry, ctx, pattern="^(Guide|end)$", output_mode="content", path="docs"
    ) == ["docs/guide.md:1:Guide", "docs/guide.md:4:end"]
    assert await grep(
        registry, ctx, pattern="^(Guide|end)$", output_mode="content", path="docs", **{"-B": 1}
    ) == ["docs/guide.md:1:Guide", "--", "docs/guide.md-3-TODO later", "docs/guide.md:4:end"]


async def test_grep_skips_git_binary_and_large_files(tmp_path: Path, make_ctx: Any) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("needle\n")
    (tmp_path / "blob.bin").write_bytes(b"needle\x00")
    (tmp_path / "big.txt").write_text("needle\n" * 100)
    (tmp_path / "small.txt").write_text("needle\n")
    registry = ToolRegistry([GrepTool(max_file_bytes=100)])
    result = await registry.call("Grep", {"pattern": "needle"}, make_ctx())
    assert result.content.splitlines() == [
        "small.txt",
        "[1 binary files skipped]",
        "[1 files larger than 100 bytes skipped]",
    ]


async def test_grep_errors(registry: ToolRegistry, ctx: ToolContext, project: Path) -> None:
    bad = await call(registry, ctx, "Grep", pattern="(unclosed")
    assert bad.is_error
    assert "Invalid regular expression" in bad.content
    missing = await call(registry, ctx, "Grep", pattern="x", path="nowhere")
    assert missing.is_error
    assert "does not exist" in missing.content
    mode = await call(registry, ctx, "Grep", pattern="x", output_mode="lines")
    assert mode.is_error
    assert "$.output_mode" in mode.content


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        (r"(a)\1", "backreferences"),
        (r"(?P<x>a)(?P=x)", "backreferences"),
        (r"foo(?=bar)", "lookahead and lookbehind"),
        (r"(?<!x)foo", "lookahead and lookbehind"),
        (r"a++", "possessive"),
        (r"(?x) a b", "verbose mode"),
        (r"a{5000}", "repetition counts"),
    ],
)
async def test_grep_explains_what_re2_refuses(
    registry: ToolRegistry, ctx: ToolContext, project: Path, pattern: str, says: str
) -> None:
    result = await call(registry, ctx, "Grep", pattern=pattern)
    assert result.is_error
    assert result.content.startswith(f"Unsupported regular expression {pattern!r}")
    assert says in result.content
    assert "RE2 syntax" in result.content


async def test_grep_python_spellings_re2_lacks(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("caf\u00e9 ok\nend\n\nlast")
    assert await grep(registry, ctx, pattern=r"caf\u00e9", output_mode="content") == [
        "f.txt:1:caf\u00e9 ok"
    ]
    # Per line, \A and \Z are the line's ends (as with Python's re on each line).
    assert await grep(registry, ctx, pattern=r"\Aend\Z", output_mode="content") == ["f.txt:2:end"]
    assert await grep(registry, ctx, pattern=r"^$", output_mode="content") == ["f.txt:3:"]
    # Over the whole text (multiline) they are the text's ends.
    assert await grep(registry, ctx, pattern=r"last\Z", multiline=True, output_mode="content") == [
        "f.txt:4:last"
    ]
    assert await grep(registry, ctx, pattern=r"end\Z", multiline=True) == []


async def test_grep_matches_never_span_lines(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    assert await grep(registry, ctx, pattern=r"alpha\sbeta") == []
    assert await grep(registry, ctx, pattern=r"a[^x]b") == []
    assert await grep(registry, ctx, pattern=r"alpha\sbeta", multiline=True) == ["f.txt"]


async def test_grep_searches_invalid_utf8_as_replacement_characters(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\xffb\nnext\n")
    assert await grep(registry, ctx, pattern="a.b", output_mode="content") == ["f.txt:1:a\ufffdb"]
    assert await grep(registry, ctx, pattern="^next$", output_mode="content") == ["f.txt:2:next"]


async def test_grep_leaves_out_lines_too_long_for_a_complex_pattern(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    pattern = "(?:x|y){1000}z"  # thousands of RE2 instructions: small windows
    (tmp_path / "f.txt").write_text("z\n" + "x" * 100_000 + "\nz\n")
    result = await call(registry, ctx, "Grep", pattern=pattern, output_mode="count")
    lines = result.content.splitlines()
    assert lines[0] == "No matches found."
    assert lines[1].startswith("[1 lines longer than ")
    assert "too long for a pattern this complex" in lines[1]
    # A simple pattern searches the same line.
    assert await grep(registry, ctx, pattern="^x+$", output_mode="count") == ["f.txt:1"]
    costly = await call(registry, ctx, "Grep", pattern=pattern, multiline=True)
    assert "[1 files larger than" in costly.content
    assert "not searched in multiline mode" in costly.content


async def test_grep_many_windows_find_every_line(
    tmp_path: Path, make_ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subagents.tools._builtin import regex

    monkeypatch.setattr(regex, "REGEX_WORK_PER_CALL", 200)  # windows of a few lines
    text = "".join(f"line {i} {'hit' if i % 7 == 0 else 'miss'}\n" for i in range(200))
    (tmp_path / "f.txt").write_text(text)
    registry = ToolRegistry([GrepTool()])
    result = await registry.call("Grep", {"pattern": "hit$", "output_mode": "count"}, make_ctx())
    assert result.content == f"f.txt:{len(range(0, 200, 7))}"


async def test_glob_collapses_globstars_and_empty_classes(
    registry: ToolRegistry, ctx: ToolContext, project: Path
) -> None:
    assert sorted(await glob(registry, ctx, "**/**/***/**/*.py")) == [
        "src/app.py",
        "src/ui/.hidden.py",
    ]
    assert await glob(registry, ctx, "src/**/**/view.tsx") == ["src/ui/view.tsx"]
    assert await glob(registry, ctx, "src/[]app.py") == []


# -- LS ---------------------------------------------------------------------------------


async def test_ls(registry: ToolRegistry, ctx: ToolContext, project: Path) -> None:
    (project / "link").symlink_to(project / "src")
    result = await call(registry, ctx, "LS")
    assert result.content.splitlines() == [
        "./",
        "  .git/",
        "  README.md",
        "  docs/",
        "  link@",
        "  src/",
    ]
    sub = await call(registry, ctx, "LS", path="src", ignore=["*.ts"])
    assert sub.content.splitlines() == ["src/", "  app.py", "  ui/"]
    (project / "empty").mkdir()
    assert (await call(registry, ctx, "LS", path="empty")).content == "empty/ is empty."
    not_dir = await call(registry, ctx, "LS", path="README.md")
    assert not_dir.is_error


async def test_ls_caps_entries(tmp_path: Path, make_ctx: Any) -> None:
    for i in range(30):
        (tmp_path / f"f{i:02}").write_text("")
    registry = ToolRegistry([LSTool(max_entries=5)])
    result = await registry.call("LS", {}, make_ctx())
    assert result.content.splitlines() == [
        "./",
        "  f00",
        "  f01",
        "  f02",
        "  f03",
        "  f04",
        "[25 more entries not shown]",
    ]


# -- TodoWrite --------------------------------------------------------------------------


async def test_todowrite_replaces_the_list_and_shows_it_back(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    """Claude Code's TodoWrite shape: ``todos`` of content, status, activeForm."""
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    result = await call(registry, ctx, "TodoWrite", todos=todos)
    assert not result.is_error
    assert result.content.splitlines() == [
        "Todo list updated (1 of 3 completed):",
        "1. [x] Read the code",
        "2. [~] Fixing the bug",
        "3. [ ] Run the tests",
    ]
    bad = await call(
        registry, ctx, "TodoWrite", todos=[{"content": "x", "status": "done", "activeForm": "x"}]
    )
    assert bad.is_error
    assert "status" in bad.content
