"""One process per job: the job's ``flock``, as agent resume's transcript lock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from subagents.jobs import JobError, JobInputError, JobLocked, show_job
from subagents.jobs._ids import job_folder
from subagents.jobs._lock import hold_job_lock, job_lock_holder


def test_a_held_lock_refuses_a_second_holder_and_names_the_first(tmp_path: Path) -> None:
    assert job_lock_holder(tmp_path) is None
    with hold_job_lock(tmp_path, "j1"):
        assert job_lock_holder(tmp_path) == f"pid {os.getpid()} on {os.uname().nodename}"
        with (
            pytest.raises(JobLocked, match=f"process pid {os.getpid()}") as caught,
            hold_job_lock(tmp_path, "j1"),
        ):
            pass  # pragma: no cover
        assert "subagents jobs cancel j1" in str(caught.value)
    assert job_lock_holder(tmp_path) is None
    with hold_job_lock(tmp_path, "j1"):  # released: taken again
        pass


def test_a_lock_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "lock").symlink_to(target)
    with pytest.raises(JobError, match="cannot be opened"), hold_job_lock(tmp_path / "job", "j1"):
        pass  # pragma: no cover
    assert target.read_text() == "keep"


@pytest.mark.parametrize("job_id", ["../escape", "..", "a/b", "", ".hidden", "x" * 200])
def test_a_job_id_is_a_plain_folder_name(tmp_path: Path, job_id: str) -> None:
    with pytest.raises(JobInputError, match="not a job id"):
        job_folder(tmp_path, job_id)
    with pytest.raises(JobInputError, match="not a job id"):
        show_job(tmp_path, job_id)
