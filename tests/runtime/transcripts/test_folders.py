"""Transcript folders: made once per process, made again if they go away."""

from __future__ import annotations

from pathlib import Path

import pytest

from subagents.runtime._transcripts import file as transcript_file
from subagents.runtime._transcripts.file import in_folder, open_append


def test_a_known_folder_is_not_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second file of a folder costs no ``mkdir`` (a failed call, an exception and a
    ``stat`` per agent, when a thousand agents share one folder)."""
    made: list[Path] = []
    real = Path.mkdir

    def counting(self: Path, *args: object, **kwargs: object) -> None:
        made.append(self)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    folder = tmp_path / "session" / "subagents"
    folder.parent.mkdir()
    monkeypatch.setattr(Path, "mkdir", counting)
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        in_folder(folder / name, lambda name=name: open_append(folder / name)).close()
    assert made == [folder]
    assert (folder.stat().st_mode & 0o777) == 0o700


def test_a_folder_removed_meanwhile_is_made_again(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    in_folder(folder / "a.jsonl", lambda: open_append(folder / "a.jsonl")).close()
    (folder / "a.jsonl").unlink()
    folder.rmdir()
    in_folder(folder / "b.jsonl", lambda: open_append(folder / "b.jsonl")).close()
    assert (folder / "b.jsonl").exists()


def test_the_known_folders_are_bounded(tmp_path: Path) -> None:
    for index in range(transcript_file._KNOWN_FOLDERS_MAX + 10):
        in_folder(tmp_path / str(index) / "t.jsonl", lambda: None)
    assert len(transcript_file._known_folders) <= transcript_file._KNOWN_FOLDERS_MAX
