"""The offline Explore policy: a scripted model that surveys one folder with the real tools.

:class:`ExplorePolicy` answers each model call of an ``Explore`` agent from the
conversation alone (never from state of its own, so a resumed agent goes on
where it was). For a task naming a folder (see :func:`folder_task`; a task
without one surveys the working directory) it:

1. lists every file with ``Glob`` (``**/*``). Glob shows at most a fixed number
   of paths (the newest) and says how many it left out; then the folder is
   split: ``LS`` gives its subfolders, each is globbed on its own (recursively,
   splitting again as needed) and its own files with ``*``;
2. counts lines and TODO/FIXME lines with ``Grep`` in ``count`` mode (one call
   per listed scope, ``head_limit`` set to the scope's file count so nothing is
   cut): pattern ``^`` matches every line of a text file, so the per-file
   counts are exact line counts; binary files (skipped by Grep, which says how
   many) and empty files (no line to match) have none;
3. reads the likeliest entry points (``__main__.py``, ``main.py``,
   ``pyproject.toml``...) with a small ``limit``;
4. ends with a short summary and a fenced JSON block of the facts.

File sizes in bytes are not reported: no read-only tool gives them. A
follow-up (:func:`followup_question`) is answered with one more tool call:
``largest-files N`` with a fresh ``^`` count, ``todo-lines`` with a ``content``
Grep. Every number comes from a tool result; the report says ``"exact":
false`` (with notes) when a cap kept some of it out of reach.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any, Final, final

import attrs

from subagents.runtime._messages import Origin
from subagents.runtime._provider import ModelRequest
from subagents.runtime._scripted import Reply
from subagents.runtime._survey import (
    DEFAULT_SURVEY_LATENCY,
    Exchange,
    call_key,
    calls_reply,
    episode_start,
    exchanges,
    fenced,
    final_reply,
    is_instruction,
    jitter,
    message_text,
    own_messages,
    parse_folder,
    parse_ls,
    parse_question,
    result_lines,
    shown,
)

__all__ = ["ExplorePolicy", "extension", "is_test_file", "language"]

_VCS: Final = frozenset({".git", ".hg", ".svn"})  # Glob and Grep never enter these
_TODO: Final = "TODO|FIXME"
_EVERY_LINE: Final = "^"
#: A Grep ``glob`` with a '/' is matched against the path below ``path``: this
#: one matches names without a '/', the directory's own files only.
_DIRECT_FILES: Final = "[!/]*"
_READ_LIMIT: Final = 20
_MAX_READS: Final = 3
_MAX_LISTED: Final = 20
_TODO_LINES_SHOWN: Final = 50

_ENTRY_POINTS: Final = (
    "__main__.py",
    "main.py",
    "cli.py",
    "app.py",
    "manage.py",
    "main.go",
    "main.rs",
    "index.js",
    "index.ts",
    "main.js",
    "main.ts",
    "server.js",
    "Main.java",
    "setup.py",
    "pyproject.toml",
    "package.json",
    "Cargo.toml",
    "go.mod",
)
_TEST_NAME: Final = re.compile(
    r"test_.*\.py|.*_test\.(?:py|go)|.*\.(?:test|spec)\.(?:[cm]?js|jsx|ts|tsx)"
    r"|.*Tests?\.(?:java|kt|cs)|.*_spec\.rb"
)
_TEST_DIRS: Final = frozenset({"tests", "test", "__tests__", "spec", "specs"})
_LANGUAGES: Final = {
    **dict.fromkeys((".py", ".pyi"), "Python"),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), "JavaScript"),
    **dict.fromkeys((".ts", ".tsx"), "TypeScript"),
    **dict.fromkeys((".c", ".h"), "C"),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".hpp", ".hh"), "C++"),
    **dict.fromkeys((".sh", ".bash", ".zsh"), "Shell"),
    **dict.fromkeys((".yaml", ".yml"), "YAML"),
    **dict.fromkeys((".html", ".htm"), "HTML"),
    **dict.fromkeys((".md", ".markdown"), "Markdown"),
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".cs": "C#",
    ".rb": "Ruby",
    ".php": "PHP",
    ".swift": "Swift",
    ".scala": "Scala",
    ".lua": "Lua",
    ".sql": "SQL",
    ".css": "CSS",
    ".scss": "SCSS",
    ".vue": "Vue",
    ".rst": "reStructuredText",
    ".json": "JSON",
    ".toml": "TOML",
    ".txt": "Text",
}
_NO_EXTENSION: Final = "(none)"

_GLOB_MORE = re.compile(r"\[(\d+) more files not shown; .*\]")
_GREP_BINARY = re.compile(r"\[(\d+) binary files skipped\]")
_GREP_LARGE = re.compile(r"\[(\d+) files larger than \d+ bytes skipped\]")
_READ_LINE = re.compile(r" *(\d+)\t(.*)")


# -- parsing tool results -------------------------------------------------------------------------


@attrs.frozen
class _Listing:
    """A Glob result: the paths shown, the total it reported (None if unknown)."""

    files: tuple[str, ...]
    total: int | None
    error: str | None = None

    @property
    def complete(self) -> bool:
        """Whether every file was named."""
        return self.total == len(self.files)

    @property
    def count(self) -> int:
        """The number of files: the total Glob reported, else the paths it showed."""
        return self.total if self.total is not None else len(self.files)


def _parse_glob(exchange: Exchange) -> _Listing:
    content = exchange.content or ""
    if exchange.is_error:
        return _Listing((), 0, error=content)
    if content == "No files found.":
        return _Listing((), 0)
    lines, cut = result_lines(content)
    more = _GLOB_MORE.fullmatch(lines[-1]) if lines and not cut else None
    if more is not None:
        lines.pop()
    files = tuple(line for line in lines if line)
    if cut:
        return _Listing(files, None)
    return _Listing(files, len(files) + (int(more.group(1)) if more else 0))


@attrs.frozen
class _Counts:
    """A Grep count result: matching lines per file, and the files it skipped."""

    per_file: Mapping[str, int]
    binary: int = 0
    large: int = 0
    complete: bool = True


def _parse_counts(exchange: Exchange) -> _Counts:
    if exchange.is_error:
        return _Counts({}, complete=False)
    lines, cut = result_lines(exchange.content or "")
    per_file: dict[str, int] = {}
    binary = large = 0
    complete = not cut
    for line in lines:
        if line.endswith("]") and line.startswith("["):
            if found := _GREP_BINARY.fullmatch(line):
                binary = int(found.group(1))
            elif found := _GREP_LARGE.fullmatch(line):
                large = int(found.group(1))
            else:
                complete = False  # "[output limited ...]"
            continue
        path, sep, count = line.rpartition(":")
        if sep and count.isdigit():
            per_file[path] = int(count)
    return _Counts(per_file, binary, large, complete)


def _read_lines(exchange: Exchange) -> list[str]:
    if exchange.is_error:
        return []
    out = []
    for line in (exchange.content or "").split("\n"):
        found = _READ_LINE.fullmatch(line)
        if found is not None:
            out.append(found.group(2))
    return out


# -- facts from file names ------------------------------------------------------------------------


def extension(path: str) -> str:
    """The lower-cased suffix of the file name (``.py``), or ``(none)``."""
    return PurePosixPath(path).suffix.lower() or _NO_EXTENSION


def language(path: str) -> str | None:
    """The language a file is written in, judged by its extension or name."""
    name = PurePosixPath(path).name
    if name in ("Makefile", "GNUmakefile"):
        return "Makefile"
    if name == "Dockerfile":
        return "Dockerfile"
    return _LANGUAGES.get(extension(path))


def is_test_file(path: str) -> bool:
    """Whether the file name follows a test naming convention (test_*.py, *_test.go...)."""
    return _TEST_NAME.fullmatch(PurePosixPath(path).name) is not None


def _test_dirs(paths: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for path in paths:
        parts = PurePosixPath(path).parts[:-1]
        for depth, part in enumerate(parts):
            if part in _TEST_DIRS:
                found.add("/".join(parts[: depth + 1]))
    return sorted(found)


def _entry_points(paths: Iterable[str]) -> list[str]:
    rank = {name: index for index, name in enumerate(_ENTRY_POINTS)}
    found = [p for p in paths if PurePosixPath(p).name in rank]
    return sorted(found, key=lambda p: (p.count("/"), rank[PurePosixPath(p).name], p))


def _ranked(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


# -- the survey of one folder ---------------------------------------------------------------------


@attrs.frozen
class _Scope:
    """Part of the folder: a directory with everything below it, or only its own files."""

    path: str
    recursive: bool

    def glob(self) -> dict[str, Any]:
        return {"pattern": "**/*" if self.recursive else "*", "path": self.path}

    def grep(self, pattern: str, head_limit: int, mode: str = "count") -> dict[str, Any]:
        args: dict[str, Any] = {
            "pattern": pattern,
            "path": self.path,
            "output_mode": mode,
            "head_limit": max(head_limit, 1),
        }
        if not self.recursive:
            args["glob"] = _DIRECT_FILES
        return args


_Call = tuple[str, dict[str, Any]]


@final
class _Survey:
    """What the tool results so far say about one folder, and which calls are still needed."""

    def __init__(self, folder: str, results: Mapping[str, Exchange]) -> None:
        self.folder = folder
        self._results = results
        self.notes: list[str] = []
        self.error: str | None = None
        self.scopes: list[tuple[_Scope, _Listing]] = []
        self.stage = "list"
        self.needed = self._list()
        if not self.needed and self.error is None:
            self.stage = "count"
            self.needed = self._count()
            if not self.needed:
                self.stage = "read"
                self.needed = self._read()
                if not self.needed:
                    self.stage = "done"

    def result(
        self, name: str, args: Mapping[str, Any], results: Mapping[str, Exchange] | None = None
    ) -> Exchange | None:
        """The result of the call ``name(args)`` among ``results`` (default: all of them)."""
        return (self._results if results is None else results).get(call_key(name, args))

    def _list(self) -> list[_Call]:
        needed: list[_Call] = []
        frontier = [_Scope(self.folder, recursive=True)]
        while frontier:
            scope = frontier.pop(0)
            found = self.result("Glob", scope.glob())
            if found is None:
                needed.append(("Glob", scope.glob()))
                continue
            listing = _parse_glob(found)
            if listing.error is not None:
                if scope.path == self.folder:
                    self.error = listing.error
                else:
                    self.notes.append(f"{scope.path}: {listing.error}")
                continue
            if listing.complete or not scope.recursive:
                self.scopes.append((scope, listing))
                continue
            ls = self.result("LS", {"path": scope.path})
            if ls is None:
                needed.append(("LS", {"path": scope.path}))
                continue
            folders, _, complete = parse_ls(ls.content or "")
            if ls.is_error or not complete:
                self.notes.append(f"{scope.path} could not be split by subfolder")
                self.scopes.append((scope, listing))
                continue
            frontier.append(_Scope(scope.path, recursive=False))
            frontier.extend(
                _Scope(_join(scope.path, name), recursive=True)
                for name in folders
                if name not in _VCS
            )
        return needed

    def _count(self) -> list[_Call]:
        needed: list[_Call] = []
        for scope, listing in self.scopes:
            total = listing.count
            if total == 0:
                continue
            for pattern in (_EVERY_LINE, _TODO):
                args = scope.grep(pattern, total)
                if self.result("Grep", args) is None:
                    needed.append(("Grep", args))
        return needed

    @property
    def paths(self) -> list[str]:
        """Every file named so far: by Glob, or by the line-count Grep (which names text
        files past Glob's cap)."""
        named = {path for _, listing in self.scopes for path in listing.files}
        for counts in self.counts(_EVERY_LINE):
            named.update(counts.per_file)
        return sorted(named)

    def _read(self) -> list[_Call]:
        needed: list[_Call] = []
        for path in _entry_points(self.paths)[:_MAX_READS]:
            args = {"file_path": path, "limit": _READ_LIMIT}
            if self.result("Read", args) is None:
                needed.append(("Read", args))
        return needed

    def counts(self, pattern: str, results: Mapping[str, Exchange] | None = None) -> list[_Counts]:
        """The parsed count-mode Grep results for ``pattern``, one per scope that has them."""
        out = []
        for scope, listing in self.scopes:
            total = listing.count
            found = self.result("Grep", scope.grep(pattern, total), results) if total else None
            if found is not None:
                out.append(_parse_counts(found))
        return out

    def facts(self) -> dict[str, Any]:
        """The facts gathered so far, as the report's JSON object."""
        if self.error is not None:
            return {"folder": self.folder, "error": self.error, "files": 0, "exact": False}
        paths = self.paths
        listings = [listing for _, listing in self.scopes]
        files = sum(x.count for x in listings)
        lines = self.counts(_EVERY_LINE)
        todos = self.counts(_TODO)
        text_files = sum(len(c.per_file) for c in lines)
        binary = sum(c.binary for c in lines)
        large = sum(c.large for c in lines)
        named = len(paths) == files and all(x.total is not None for x in listings)
        exact = (
            self.stage == "done"
            and not self.notes
            and named
            and all(c.complete for c in (*lines, *todos))
        )
        notes = list(self.notes)
        if self.stage != "done":
            notes.append(f"the survey stopped before it was finished (at the {self.stage} step)")
        if not named:
            notes.append(
                f"{files - len(paths)} of {files} files were not named by any tool result: "
                "extensions, tests and entry points leave them out"
            )
        if not all(c.complete for c in (*lines, *todos)):
            notes.append("a Grep result was cut short: line and TODO/FIXME counts are partial")
        tests = sorted(p for p in paths if is_test_file(p))
        entry_points = _entry_points(paths)
        heads: dict[str, str] = {}
        for path in entry_points[:_MAX_READS]:
            found = self.result("Read", {"file_path": path, "limit": _READ_LIMIT})
            if found is not None:
                head = next((t.strip() for t in _read_lines(found) if t.strip()), "")
                heads[path] = head[:100]
        return {
            "folder": self.folder,
            "files": files,
            "lines": sum(sum(c.per_file.values()) for c in lines),
            "text_files": text_files,
            "binary_files": binary,
            "large_files": large,
            "empty_files": max(files - text_files - binary - large, 0),
            "extensions": _ranked(Counter(extension(p) for p in paths)),
            "languages": _ranked(Counter(lang for p in paths if (lang := language(p)))),
            "todo_fixme": sum(sum(c.per_file.values()) for c in todos),
            "todo_fixme_files": sum(len(c.per_file) for c in todos),
            "tests": len(tests),
            "test_files": tests[:_MAX_LISTED],
            "test_dirs": _test_dirs(paths)[:_MAX_LISTED],
            "entry_points": entry_points[:_MAX_LISTED],
            "entry_point_heads": heads,
            "exact": exact,
            "notes": notes,
        }


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _summary(facts: Mapping[str, Any]) -> str:
    """The report: a few sentences for people, then the facts as JSON."""
    where = shown(str(facts["folder"]))
    if "error" in facts:
        return f"I could not survey {where}: {facts['error']}\n\n{fenced(facts)}"
    kinds = ", ".join(
        f"{n} {kind}"
        for kind, n in (
            ("text", facts["text_files"]),
            ("binary", facts["binary_files"]),
            ("empty", facts["empty_files"]),
            ("too large to scan", facts["large_files"]),
        )
        if n
    )
    languages = ", ".join(f"{k} {v}" for k, v in facts["languages"].items()) or "none recognised"
    parts = [
        f"Surveyed {where}: {_plural(facts['files'], 'file')}"
        + (f" ({kinds})" if kinds else "")
        + f", {_plural(facts['lines'], 'line')}.",
        f"Languages: {languages}.",
        f"TODO/FIXME: {_plural(facts['todo_fixme'], 'line')} in "
        f"{_plural(facts['todo_fixme_files'], 'file')}.",
        f"Tests: {_plural(facts['tests'], 'test file')}"
        + (f" (test folders: {', '.join(facts['test_dirs'])})." if facts["test_dirs"] else "."),
    ]
    if facts["entry_points"]:
        parts.append(f"Entry points: {', '.join(facts['entry_points'][:_MAX_READS])}.")
    if not facts["exact"]:
        parts.append("Some numbers are incomplete: " + "; ".join(facts["notes"]) + ".")
    return " ".join(parts) + "\n\n" + fenced(facts)


# -- the policy -----------------------------------------------------------------------------------


@final
@attrs.frozen
class ExplorePolicy:
    """The scripted model of an ``Explore`` agent surveying a folder (see the module doc).

    ``latency`` (seconds, jittered 50-150% per turn) is how long each reply
    takes, so a live view has something to show; 0 answers at once.
    """

    latency: float = DEFAULT_SURVEY_LATENCY

    def __call__(self, request: ModelRequest) -> Reply:
        """The next reply, worked out from the conversation so far."""
        messages = own_messages(request.messages)
        latency = jitter(self.latency, request)
        start = episode_start(messages)
        every = exchanges(messages)
        results = {call_key(e.name, e.input): e for e in every if e.content is not None}
        fresh = {
            call_key(e.name, e.input): e for e in every if e.content is not None and e.at >= start
        }
        tasks = [i for i, m in enumerate(messages) if m.origin is Origin.TASK]
        task_at = tasks[-1] if tasks else None
        if task_at is None:
            task_at = next((i for i, m in enumerate(messages) if is_instruction(m)), 0)
        task = message_text(messages[task_at]) if messages else ""
        survey = _Survey(parse_folder(task) or ".", results)
        asked = [
            message_text(m)
            for i, m in enumerate(messages)
            if i >= start and i > task_at and is_instruction(m)
        ]
        if survey.needed and (start <= task_at or asked) and not request.grace:
            return calls_reply(_step_text(survey), survey.needed, latency)
        answers: list[str] = []
        for question in asked:
            kind, count = parse_question(question)
            needed = _followup_calls(survey, kind, fresh)
            if needed and not request.grace:
                return calls_reply(_followup_text(kind, survey.folder), needed, latency)
            answers.append(_answer(survey, kind, count, fresh))
        parts = [_summary(survey.facts())] if start <= task_at or not answers else []
        return final_reply(request, "\n\n".join([*parts, *answers]), latency)


def _step_text(survey: _Survey) -> str:
    where = shown(survey.folder)
    if survey.stage == "list":
        if any(name == "LS" for name, _ in survey.needed):
            return f"Glob did not list every file of {where}; splitting it by subfolder."
        return f"Listing every file in {where} with Glob."
    if survey.stage == "count":
        return "Counting lines (pattern ^) and TODO/FIXME lines with Grep in count mode."
    return "Reading the likeliest entry points: " + ", ".join(
        a["file_path"] for _, a in survey.needed
    )


def _followup_calls(survey: _Survey, kind: str, fresh: Mapping[str, Exchange]) -> list[_Call]:
    """The calls a follow-up needs that this episode (``fresh``) has not made yet."""
    needed: list[_Call] = []
    for scope, listing in survey.scopes:
        total = listing.count
        if not total:
            continue
        if kind == "largest-files":
            args = scope.grep(_EVERY_LINE, total)
        elif kind == "todo-lines":
            args = scope.grep(_TODO, _TODO_LINES_SHOWN, mode="content")
        else:
            continue
        if survey.result("Grep", args, fresh) is None:
            needed.append(("Grep", args))
    return needed


def _followup_text(kind: str, folder: str) -> str:
    if kind == "largest-files":
        return f"Counting the lines of every file in {shown(folder)} again to rank them."
    return f"Listing the TODO/FIXME lines of {shown(folder)} with Grep."


def _answer(survey: _Survey, kind: str, count: int, fresh: Mapping[str, Exchange]) -> str:
    """The text (and JSON block) answering one follow-up from this episode's results."""
    if kind == "largest-files":
        return _largest_files(survey, count, fresh)
    if kind == "todo-lines":
        return _todo_lines(survey, fresh)
    facts = survey.facts()
    return (
        "I can answer questions about the files, lines, languages, TODO/FIXME lines, tests "
        "and entry points of the folder. What I found: " + _summary(facts).split("\n\n")[0]
    )


def _largest_files(survey: _Survey, count: int, fresh: Mapping[str, Exchange]) -> str:
    per_file = {p: n for c in survey.counts(_EVERY_LINE, fresh) for p, n in c.per_file.items()}
    top = sorted(per_file.items(), key=lambda item: (-item[1], item[0]))[:count]
    listed = ", ".join(f"{p} ({_plural(n, 'line')})" for p, n in top) or "none (no text files)"
    facts = {
        "followup": "largest-files",
        "folder": survey.folder,
        "files": [{"path": p, "lines": n} for p, n in top],
    }
    return (
        f"The {count} largest files in {shown(survey.folder)} by line count: {listed}.\n\n"
        f"{fenced(facts)}"
    )


def _todo_lines(survey: _Survey, fresh: Mapping[str, Exchange]) -> str:
    found: list[str] = []
    for scope, listing in survey.scopes:
        args = scope.grep(_TODO, _TODO_LINES_SHOWN, mode="content")
        result = survey.result("Grep", args, fresh) if listing.count else None
        if result is not None and not result.is_error:
            lines, _ = result_lines(result.content or "")
            found.extend(x for x in lines if x and x != "No matches found." and x[0] != "[")
    total = sum(sum(c.per_file.values()) for c in survey.counts(_TODO))
    facts = {"followup": "todo-lines", "folder": survey.folder, "total": total, "lines": found}
    listed = "\n".join(f"- {line}" for line in found) or "(none)"
    return (
        f"TODO/FIXME lines in {shown(survey.folder)} ({len(found)} shown of {total}):\n"
        f"{listed}\n\n{fenced(facts)}"
    )
