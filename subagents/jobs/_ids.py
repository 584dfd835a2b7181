"""Job ids: sortable, unique, and safe as a folder name in the state directory."""

from __future__ import annotations

import datetime
import re
import secrets
from pathlib import Path
from typing import Final

from subagents.jobs._exceptions import JobInputError

__all__ = ["check_job_id", "job_folder", "new_job_id"]

_VALID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def new_job_id() -> str:
    """A new job id: ``YYYYMMDD-HHMMSS-<8 hex>`` (UTC), sortable by start time."""
    now = datetime.datetime.now(datetime.UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


def check_job_id(job_id: str) -> str:
    """``job_id`` if it is a safe folder name (letters, digits, ``.``, ``_``, ``-``)."""
    if not isinstance(job_id, str) or not _VALID.fullmatch(job_id) or ".." in job_id:
        raise JobInputError(
            f"{job_id!r} is not a job id: one is up to 128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            fix="Copy the id from `subagents jobs list`.",
        )
    return job_id


def job_folder(state_dir: Path, job_id: str) -> Path:
    """The folder of job ``job_id`` in the jobs' state directory."""
    return state_dir / check_job_id(job_id)
