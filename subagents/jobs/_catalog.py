"""The jobs of a state directory, read for ``jobs list``/``show`` and changed by ``cancel``.

Each function is blocking (a CLI calls it in a worker thread) and opens the
job's database for the call only. A job whose state says ``running`` but
whose lock nobody holds was stopped without finishing (a crash, ``kill
-9``): it is shown ``interrupted``, and ``resume`` goes on with it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Final

import attrs

from subagents.jobs._doorbell import ring_doorbell
from subagents.jobs._exceptions import JobError, UnknownJob
from subagents.jobs._ids import check_job_id, job_folder
from subagents.jobs._lock import job_lock_holder
from subagents.jobs._spec import JobSpec
from subagents.jobs._state import DATABASE_NAME, JobDatabase

__all__ = ["JobInfo", "cancel_job", "list_jobs", "load_job_spec", "show_job"]

#: Failed rows a ``show`` names (Codex's job result names the first five).
_FAILURES_SHOWN: Final = 5


@attrs.frozen
class JobInfo:
    """One job as ``jobs list``/``show`` give it.

    ``status`` is ``running`` (a process runs it: ``holder``), ``interrupted``
    (nobody does, rows are pending), ``cancelled`` or ``completed``.
    ``failures`` are the first failed rows, as ``(item_id, last_error)``.
    """

    job_id: str
    status: str
    agent: str
    input_path: str
    output_path: str | None
    total: int
    completed: int
    failed: int
    created_at: float
    updated_at: float
    holder: str | None = None
    failures: tuple[tuple[str, str], ...] = ()

    @property
    def pending(self) -> int:
        """Rows not final yet."""
        return self.total - self.completed - self.failed


def _open(state_dir: Path, job_id: str, *, readonly: bool) -> tuple[Path, JobDatabase]:
    folder = job_folder(state_dir, job_id)
    database = folder / DATABASE_NAME
    if not database.is_file():
        raise UnknownJob(job_id, state_dir)
    return folder, JobDatabase(database, readonly=readonly)


def _info(folder: Path, db: JobDatabase, failures: int) -> JobInfo:
    record = db.load()
    spec = JobSpec.from_json(record.spec_json)
    holder = job_lock_holder(folder)
    status = record.status
    if status == "running" and holder is None:
        status = "interrupted"
    failed = tuple(
        (item.item_id, item.last_error or "")
        for item in (db.items("failed", failures) if failures > 0 else ())
    )
    return JobInfo(
        job_id=record.job_id,
        status=status,
        agent=spec.agent,
        input_path=str(spec.input_path),
        output_path=record.output_path
        or (None if spec.output_path is None else str(spec.output_path)),
        total=record.total,
        completed=record.completed,
        failed=record.failed,
        created_at=record.created_at,
        updated_at=record.updated_at,
        holder=holder,
        failures=failed,
    )


def show_job(state_dir: Path, job_id: str) -> JobInfo:
    """Job ``job_id`` of ``state_dir``; :class:`UnknownJob` if there is none."""
    folder, db = _open(state_dir, job_id, readonly=True)
    try:
        return _info(folder, db, _FAILURES_SHOWN)
    finally:
        db.close()


def list_jobs(state_dir: Path) -> list[JobInfo]:
    """Every job of ``state_dir``, oldest first (a folder that is not a job is skipped)."""
    found: list[JobInfo] = []
    with contextlib.suppress(FileNotFoundError):
        for folder in sorted(state_dir.iterdir()):
            try:
                check_job_id(folder.name)
                found.append(show_job(state_dir, folder.name))
            except JobError:
                continue
    return sorted(found, key=lambda info: (info.created_at, info.job_id))


def cancel_job(state_dir: Path, job_id: str) -> JobInfo:
    """Mark job ``job_id`` cancelled; the process running it stops at once (its doorbell
    rung), or at its next committed row where it has no doorbell.

    Its unfinished rows stay pending: ``resume`` runs them. A completed job
    is left as it is.
    """
    folder, db = _open(state_dir, job_id, readonly=False)
    try:
        if db.load().status != "completed":
            db.set_status("cancelled")
            ring_doorbell(folder)
        return _info(folder, db, _FAILURES_SHOWN)
    finally:
        db.close()


def load_job_spec(state_dir: Path, job_id: str) -> JobSpec:
    """The spec job ``job_id`` was created with (its id set), for a resume."""
    _, db = _open(state_dir, job_id, readonly=True)
    try:
        return JobSpec.from_json(db.load().spec_json)
    finally:
        db.close()
