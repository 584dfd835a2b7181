"""What a team needs to come back after its process ended: one small file per lead.

A team lives in memory; its board lives in its journal. What ties them
together again after a crash (``kill -9``) is this record: the team's name and
description, its lead, its board's journal (relative to the state directory)
and its teammates by name and agent id, in the order they joined. It is
rewritten whole, atomically (a temporary file, fsync'd, renamed over the old
one), each time the team is made or a teammate joins, so a reader sees the
old record or the new one, never half of one. It is removed when the team is
ended on purpose (``TeamDelete``, :meth:`Team.close`); a team that ended with
its lead (closed, or its process gone) keeps it, and resuming the lead brings
the team back from it (:meth:`TeamDirectory.stored`).

It is bounded: a record holds at most :data:`MAX_RECORDED_MEMBERS` teammates,
and a file longer than :data:`MAX_RECORD_BYTES` is not read. A record that
cannot be read is treated as no record (the lead comes back without a team).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import Final

import msgspec

__all__ = [
    "MAX_RECORDED_MEMBERS",
    "MAX_RECORD_BYTES",
    "TeamRecord",
    "read_team_record",
    "remove_team_record",
    "team_record_path",
    "write_team_record",
]

#: The most teammates one record keeps (a team never comes near it: ``max_threads``).
MAX_RECORDED_MEMBERS: Final = 1024
#: A record file longer than this is not read.
MAX_RECORD_BYTES: Final = 256 * 1024


class TeamRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """A team as its record file keeps it (see the module docstring)."""

    name: str
    lead_id: str
    description: str = ""
    board: str | None = None
    """The board's journal, relative to the state directory (``None``: kept in memory)."""
    members: tuple[tuple[str, str], ...] = ()
    """``(name, agent_id)`` of each teammate, in the order they joined."""


#: What a lead id must look like to name a record file (no separators, no dot first).
_FILE_ID: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
#: What a board's journal may be: a file two folders under ``teams/`` of the state directory.
_BOARD_FILE: Final = re.compile(
    r"teams/[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\.jsonl"
)
_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder(TeamRecord)


def team_record_path(folder: Path, lead_id: str) -> Path:
    """The record of the team ``lead_id`` leads, in ``folder``; ``ValueError`` for an id
    that could not safely name a file."""
    if not _FILE_ID.fullmatch(lead_id):
        raise ValueError(f"{lead_id!r} cannot name a team record")
    return folder / f"{lead_id}.json"


def write_team_record(folder: Path, record: TeamRecord) -> None:
    """Write ``record`` atomically (temporary file, fsync, rename); ``folder`` is made."""
    if len(record.members) > MAX_RECORDED_MEMBERS:
        record = msgspec.structs.replace(record, members=record.members[:MAX_RECORDED_MEMBERS])
    folder.mkdir(parents=True, exist_ok=True)
    target = team_record_path(folder, record.lead_id)
    fd, temporary = tempfile.mkstemp(prefix=".team-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(_encoder.encode(record))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:  # re-raised: the temporary file is not left behind
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read_team_record(folder: Path, lead_id: str) -> TeamRecord | None:
    """The record of the team ``lead_id`` led, or ``None`` (none, unreadable, too long)."""
    try:
        with team_record_path(folder, lead_id).open("rb") as file:
            data = file.read(MAX_RECORD_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_RECORD_BYTES:
        return None
    try:
        record = _decoder.decode(data)
    except msgspec.MsgspecError:
        return None
    if record.lead_id != lead_id:
        return None
    if record.board is not None and not _BOARD_FILE.fullmatch(record.board):
        return None  # a journal outside the teams' folder is never opened
    return record


def remove_team_record(folder: Path, lead_id: str) -> None:
    """Remove the record of the team ``lead_id`` leads (nothing happens without one)."""
    with contextlib.suppress(FileNotFoundError, ValueError):
        team_record_path(folder, lead_id).unlink()
