"""The ``subagents`` command: the kernel demo reports correct figures; bad input is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from subagents.cli import main


def make_tree(root: Path) -> None:
    (root / "alpha").mkdir()
    (root / "alpha" / "one.py").write_text("a\nb\nc\n")
    (root / "alpha" / "deep").mkdir()
    (root / "alpha" / "deep" / "two.py").write_text("x\n")
    (root / "beta").mkdir()
    (root / "beta" / "notes.md").write_text("\n" * 10)
    (root / "gamma").mkdir()
    (root / "node_modules").mkdir()  # skipped
    (root / "node_modules" / "big.js").write_text("\n" * 1000)
    (root / "top.txt").write_text("not in a folder\n")


def test_demo_surveys_every_folder_within_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_tree(tmp_path)
    assert main(["demo", str(tmp_path), "--max-threads", "2"]) == 0
    out = capsys.readouterr().out
    rows = {
        m.group(1): (int(m.group(2)), int(m.group(3)))
        for m in re.finditer(r"^(\w+)/\s+(\d+)\s+(\d+)", out, re.MULTILINE)
    }
    assert rows == {"alpha": (2, 4), "beta": (1, 10), "gamma": (0, 0)}
    assert re.search(r"^total\s+3\s+14$", out, re.MULTILINE)
    # the lead and one worker at a time: the three workers waited for the slot
    assert "4 agents, at most 2 at once (max_threads=2)" in out
    assert out.count("spawned: survey") == 3


def test_demo_refuses_what_it_cannot_survey(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main(["demo", str(tmp_path), "--max-threads", "0"]) == 2
    assert "--max-threads must be at least 1" in capsys.readouterr().err


def test_agents_commands_are_wired(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents", "show", "Explore", "--home", "/nonexistent-home"]) == 0
    assert "Explore" in capsys.readouterr().out
