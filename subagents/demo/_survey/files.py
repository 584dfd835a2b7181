"""Facts a file's path alone tells: its extension and language, a test, an entry point.

The Explore survey names files but cannot open them all; these rules judge
them by name (and by the folders they sit in), the same way for every folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Final

__all__ = ["entry_points_in", "extension", "is_test_file", "language", "test_dirs_in"]

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


def test_dirs_in(paths: Iterable[str]) -> list[str]:
    """The test folders (``tests``, ``spec``...) that hold the given files, sorted."""
    found: set[str] = set()
    for path in paths:
        parts = PurePosixPath(path).parts[:-1]
        for depth, part in enumerate(parts):
            if part in _TEST_DIRS:
                found.add("/".join(parts[: depth + 1]))
    return sorted(found)


def entry_points_in(paths: Iterable[str]) -> list[str]:
    """The entry points among the given files, shallowest and likeliest first."""
    rank = {name: index for index, name in enumerate(_ENTRY_POINTS)}
    found = [p for p in paths if PurePosixPath(p).name in rank]
    return sorted(found, key=lambda p: (p.count("/"), rank[PurePosixPath(p).name], p))
