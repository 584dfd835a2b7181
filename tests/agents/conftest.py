"""Fixtures for the agent definition tests: the corpus, file writing, the CLI."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from subagents.cli._agents import add_agents_commands

#: The VoltAgent corpus, vendored with its licence (tests/fixtures/corpus/README.md).
CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "voltagent"


@pytest.fixture
def corpus() -> Path:
    """The VoltAgent corpus folder, vendored under tests/fixtures."""
    assert CORPUS.is_dir(), f"the vendored agent corpus is missing at {CORPUS}"
    return CORPUS


Writer = Callable[[Path, str], Path]


@pytest.fixture
def write() -> Writer:
    """Write dedented text to a file, creating its folders; returns the path."""

    def _write(path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty home folder for the user scope (the real ~ is never read)."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder, outside ``home``."""
    folder = tmp_path / "work" / "project"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def cli() -> Callable[..., int]:
    """Run ``subagents agents ...`` through a parser built here; returns the exit code."""
    parser = argparse.ArgumentParser(prog="subagents")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_agents_commands(subparsers)

    def run(*argv: str) -> int:
        args = parser.parse_args(["agents", *argv])
        code: int = args.func(args)
        return code

    return run
