"""The survey of one folder: which tool calls it still needs, and the facts so far.

:class:`Survey` is worked out anew from the tool results each turn (nothing is
kept between turns): it lists the folder with ``Glob`` (splitting it by
subfolder with ``LS`` when Glob's cap hides files), counts lines and TODO/FIXME
lines with ``Grep`` per listed scope, reads the likeliest entry points, and
says which calls are still missing at the step it has reached.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Final, final

import attrs

from subagents.demo._survey.common import Exchange, call_key
from subagents.demo._survey.files import (
    entry_points_in,
    extension,
    is_test_file,
    language,
    test_dirs_in,
)
from subagents.demo._survey.results import (
    Counts,
    Listing,
    parse_counts,
    parse_glob,
    parse_ls,
    read_lines,
)

__all__ = ["EVERY_LINE", "MAX_READS", "TODO", "Call", "Survey"]

_VCS: Final = frozenset({".git", ".hg", ".svn"})  # Glob and Grep never enter these
TODO: Final = "TODO|FIXME"
EVERY_LINE: Final = "^"
#: A Grep ``glob`` with a '/' is matched against the path below ``path``: this
#: one matches names without a '/', the directory's own files only.
_DIRECT_FILES: Final = "[!/]*"
_READ_LIMIT: Final = 20
MAX_READS: Final = 3
_MAX_LISTED: Final = 20


def _ranked(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


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


Call = tuple[str, dict[str, Any]]


@final
class Survey:
    """What the tool results so far say about one folder, and which calls are still needed."""

    def __init__(self, folder: str, results: Mapping[str, Exchange]) -> None:
        self.folder = folder
        self._results = results
        self.notes: list[str] = []
        self.error: str | None = None
        self.scopes: list[tuple[_Scope, Listing]] = []
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

    def _list(self) -> list[Call]:
        needed: list[Call] = []
        frontier = [_Scope(self.folder, recursive=True)]
        while frontier:
            scope = frontier.pop(0)
            found = self.result("Glob", scope.glob())
            if found is None:
                needed.append(("Glob", scope.glob()))
                continue
            listing = parse_glob(found)
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

    def _count(self) -> list[Call]:
        needed: list[Call] = []
        for scope, listing in self.scopes:
            total = listing.count
            if total == 0:
                continue
            for pattern in (EVERY_LINE, TODO):
                args = scope.grep(pattern, total)
                if self.result("Grep", args) is None:
                    needed.append(("Grep", args))
        return needed

    @property
    def paths(self) -> list[str]:
        """Every file named so far: by Glob, or by the line-count Grep (which names text
        files past Glob's cap)."""
        named = {path for _, listing in self.scopes for path in listing.files}
        for counts in self.counts(EVERY_LINE):
            named.update(counts.per_file)
        return sorted(named)

    def _read(self) -> list[Call]:
        needed: list[Call] = []
        for path in entry_points_in(self.paths)[:MAX_READS]:
            args = {"file_path": path, "limit": _READ_LIMIT}
            if self.result("Read", args) is None:
                needed.append(("Read", args))
        return needed

    def counts(self, pattern: str, results: Mapping[str, Exchange] | None = None) -> list[Counts]:
        """The parsed count-mode Grep results for ``pattern``, one per scope that has them."""
        out = []
        for scope, listing in self.scopes:
            total = listing.count
            found = self.result("Grep", scope.grep(pattern, total), results) if total else None
            if found is not None:
                out.append(parse_counts(found))
        return out

    def facts(self) -> dict[str, Any]:
        """The facts gathered so far, as the report's JSON object."""
        if self.error is not None:
            return {"folder": self.folder, "error": self.error, "files": 0, "exact": False}
        paths = self.paths
        listings = [listing for _, listing in self.scopes]
        files = sum(x.count for x in listings)
        lines = self.counts(EVERY_LINE)
        todos = self.counts(TODO)
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
        entry_points = entry_points_in(paths)
        heads: dict[str, str] = {}
        for path in entry_points[:MAX_READS]:
            found = self.result("Read", {"file_path": path, "limit": _READ_LIMIT})
            if found is not None:
                head = next((t.strip() for t in read_lines(found) if t.strip()), "")
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
            "test_dirs": test_dirs_in(paths)[:_MAX_LISTED],
            "entry_points": entry_points[:_MAX_LISTED],
            "entry_point_heads": heads,
            "exact": exact,
            "notes": notes,
        }
