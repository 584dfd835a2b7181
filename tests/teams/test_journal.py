"""The board's JSONL journal: replay, torn and corrupt lines, the lock, compaction, disk errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subagents.teams import (
    BoardInUse,
    BoardWriteError,
    Checkpoint,
    CheckpointBlocked,
    InvalidTaskMetadata,
    open_board,
)


async def _three_changes(path: Path) -> None:
    async with open_board(path) as board:
        a = await board.create("A", "a")
        await board.create("B", "b", blocked_by=[a.id])
        await board.claim(a.id, "ada")


async def test_each_change_is_one_line_on_disk_before_the_answer(tmp_path: Path) -> None:
    path = tmp_path / "board.jsonl"
    async with open_board(path) as board:
        await board.create("A", "a")
        assert len(path.read_bytes().splitlines()) == 1  # written before create returned
        await board.claim("1", "ada")
        lines = path.read_bytes().splitlines()
        assert len(lines) == 2
        assert json.loads(lines[1])["task"]["owner"] == "ada"


async def test_a_torn_last_line_is_reported_dropped_and_nothing_earlier_lost(
    tmp_path: Path,
) -> None:
    path = tmp_path / "board.jsonl"
    await _three_changes(path)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"v":1,"task":{"id":"3","sub')  # a crash mid-write
    async with open_board(path) as board:
        assert len(board.replay.skipped) == 1
        assert "incomplete" in board.replay.skipped[0]
        assert [(t.id, t.owner) for t in board.snapshot()] == [("1", "ada"), ("2", None)]
        assert (await board.create("C", "c")).id == "3"
    assert path.read_bytes().startswith(whole)
    assert all(json.loads(line) for line in path.read_bytes().splitlines())


async def test_a_corrupt_line_is_reported_and_skipped_and_the_rest_replayed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "board.jsonl"
    await _three_changes(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(1, b"not json at all\n")
    lines.insert(2, b'{"v":1,"task":{"id":"../x","subject":"s","description":"d"}}\n')
    path.write_bytes(b"".join(lines))
    async with open_board(path) as board:
        assert len(board.replay.skipped) == 2
        assert ":2:" in board.replay.skipped[0]
        assert ":3:" in board.replay.skipped[1]
        assert [(t.id, t.owner) for t in board.snapshot()] == [("1", "ada"), ("2", None)]


async def test_one_board_at_a_time_holds_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "board.jsonl"
    async with open_board(path):
        with pytest.raises(BoardInUse, match="another board"):
            async with open_board(path):
                pass
    async with open_board(path):
        pass


async def test_a_long_journal_is_compacted_to_one_line_per_task_on_open(tmp_path: Path) -> None:
    path = tmp_path / "board.jsonl"
    async with open_board(path) as board:
        await board.create("A", "a")
        await board.claim("1", "ada")
        before = board.snapshot()
    last = path.read_bytes().splitlines(keepends=True)[-1]
    with path.open("ab") as journal:  # a long history of changes, as an old board left it
        journal.write(last * 1_100)
    async with open_board(path) as board:
        assert board.replay.compacted
        assert board.snapshot() == before
        await board.create("B", "b")
    assert len(path.read_bytes().splitlines()) == 2
    async with open_board(path) as board:
        assert not board.replay.compacted
        assert len(board.snapshot()) == 2


async def test_a_journal_that_cannot_be_written_fails_the_change_and_keeps_what_was_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "board.jsonl"
    async with open_board(path) as board:
        await board.create("A", "a")

        def full(fd: int) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr("os.fsync", full)
        with pytest.raises(BoardWriteError, match="No space left"):
            await board.create("B", "b")
        with pytest.raises(BoardWriteError):  # no further change is taken
            await board.claim("1", "ada")
        assert [t.subject for t in await board.list()] == ["A"]  # nor shown
        monkeypatch.undo()
    async with open_board(path) as again:
        assert again.snapshot()[0].subject == "A"


async def test_a_folder_that_cannot_be_made_is_a_write_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(BoardWriteError, match="could not write its journal"):
        async with open_board(tmp_path / "file" / "board.jsonl"):
            pass


async def test_an_id_a_refused_creation_took_is_not_handed_out_after_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "board.jsonl"

    async def refuse_all(checkpoint: Checkpoint) -> str | None:
        return "no"

    async with open_board(path, gate=refuse_all) as board:
        with pytest.raises(CheckpointBlocked):
            await board.create("A", "a")
    async with open_board(path) as board:
        assert board.replay.next_id == 2
        assert (await board.create("B", "b")).id == "2"


async def test_a_board_that_changes_forever_compacts_its_journal_as_it_goes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "board.jsonl"
    async with open_board(path) as board:
        task = await board.create("A", "a")
        for n in range(1_100):
            await board.update(task.id, owner=f"m{n % 2}")
        lines = len(path.read_bytes().splitlines())
        assert lines < 200  # compacted once it passed 1,004 lines, then appended to
        before = board.snapshot()
    async with open_board(path) as again:
        assert again.snapshot() == before
        assert again.replay.skipped == ()


async def test_metadata_survives_a_restart_and_an_old_journal_line_has_none(
    tmp_path: Path,
) -> None:
    """A task's metadata is in its journal line; a line written before metadata existed
    (no ``metadata_json`` key) reads back as a task without any."""
    path = tmp_path / "board.jsonl"
    async with open_board(path) as board:
        await board.create("a", "d", metadata={"area": "api", "gone": None})
        await board.update("1", metadata={"points": 2})
    old = {"v": 1, "task": {"id": "9", "subject": "old", "description": "d"}}
    with path.open("a") as file:
        file.write(json.dumps(old) + "\n")
    async with open_board(path) as board:
        first = await board.get("1")
        assert first.metadata == {"area": "api", "points": 2}
        assert (await board.get("9")).metadata == {}


async def test_metadata_the_program_gives_that_is_not_json_is_refused_with_a_typed_error(
    tmp_path: Path,
) -> None:
    """Through the Python API anything can be passed: what is not a JSON object of string
    keys is refused (the board goes on), and nothing is written."""
    async with open_board(tmp_path / "board.jsonl") as board:
        for bad in ({"when": object()}, {1: "x"}, {"deep": [{"x": object()}]}):
            with pytest.raises(InvalidTaskMetadata):
                await board.create("a", "d", metadata=bad)  # type: ignore[dict-item]
        made = await board.create("a", "d", metadata={"ok": True})
        with pytest.raises(InvalidTaskMetadata):
            await board.update(made.id, metadata={"bad": object()})
        assert (await board.get(made.id)).metadata == {"ok": True}
