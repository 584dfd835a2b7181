"""Helpers the transcript tests share."""

from __future__ import annotations

import os
import threading

import pytest
import trio

from subagents.runtime._transcripts.syncer import SyncHelper


def hold_new_files(monkeypatch: pytest.MonkeyPatch) -> tuple[trio.Event, trio.Event]:
    """Make the helper process's new files wait: ``asked`` is set when a batch is asked
    for, and the batch goes to the helper once ``release`` is set."""
    asked, release = trio.Event(), trio.Event()
    real = SyncHelper.open_all

    async def held(self: SyncHelper, paths: list[bytes]) -> list[int]:
        asked.set()
        await release.wait()
        return await real(self, paths)

    monkeypatch.setattr(SyncHelper, "open_all", held)
    return asked, release


def record_fsync_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, the thread of every ``os.fsync`` call of this process, in order."""
    synced: list[int] = []
    real = os.fsync

    def recording(fd: int) -> None:
        synced.append(threading.get_ident())
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return synced
