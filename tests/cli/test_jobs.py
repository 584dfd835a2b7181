"""``subagents jobs`` as a user runs it: a subprocess on small CSV and JSONL files, offline.

What is checked follows issue 19 and Codex's agent jobs
(``codex-rs/core/src/tools/handlers/agent_jobs.rs``: every input column, then
the job's columns; rows from a CSV with a header row; a resumable job): the
output CSV is complete and its columns are in the specified order, each user
error is one line with exit code 2, ``--json`` writes one line per job event
then a ``job_summary``, ``list``/``show``/``cancel``/``resume`` work on the
state directory, Ctrl-C leaves a job that ``resume`` finishes without running
a row twice, and on a terminal a progress bar shows the rate and the ETA.
"""

from __future__ import annotations

import csv
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from subagents.cli import main
from tests.cli.helpers import rest_of

COMMAND = [sys.executable, "-m", "subagents.cli", "jobs"]
TIMEOUT = 120
JOB_COLUMNS = [
    "job_id",
    "item_id",
    "status",
    "attempts",
    "last_error",
    "result_json",
    "started_at",
    "completed_at",
]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["COLUMNS"] = "160"
    return env


def jobs(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=environment(),
        cwd=tmp_path,
        check=False,
    )


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    csv.field_size_limit(1 << 24)
    with path.open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def test_a_csv_job_writes_every_row_and_the_columns_in_order(tmp_path: Path, state: Path) -> None:
    source = write_csv(
        tmp_path / "tickets.csv",
        ["id", "text", "team"],
        [["t1", "login fails, twice", "web"], ["t2", 'says "hi"', "api"], ["t3", "é ✓", "web"]],
    )
    done = jobs(tmp_path, "run", str(source), "--agent", "general-purpose",
                "--prompt", "Classify ticket {id} of {team}: {text}", "--output", "out.csv",
                "--state-dir", str(state), "--id-column", "id")  # fmt: skip
    assert done.returncode == 0, done.stderr
    header, rows = read_csv(tmp_path / "out.csv")
    assert header == ["id", "text", "team", *JOB_COLUMNS]
    assert [row["id"] for row in rows] == ["t1", "t2", "t3"]
    assert [row["item_id"] for row in rows] == ["t1", "t2", "t3"]
    assert {row["status"] for row in rows} == {"completed"}
    assert rows[1]["text"] == 'says "hi"'
    assert rows[2]["text"] == "é ✓"
    # Each row's agent got its own prompt: the scripted reply quotes it.
    assert "Classify ticket t1 of web: login fails, twice" in json.loads(rows[0]["result_json"])
    job_id = rows[0]["job_id"]
    assert all(row["job_id"] == job_id for row in rows)
    assert f"job {job_id} completed: 3 rows, 3 completed, 0 failed" in done.stdout


def test_a_jsonl_job_with_an_output_schema_in_json_lines(tmp_path: Path, state: Path) -> None:
    source = tmp_path / "files.jsonl"
    source.write_text(
        '{"path": "a.py", "lines": 10}\n{"path": "b.py", "lines": 20}\n', encoding="utf-8"
    )
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "required": ["verdict"],
                "properties": {"verdict": {"enum": ["ok", "needs work"]}},
            }
        )
    )
    done = jobs(tmp_path, "run", "files.jsonl", "--agent", "general-purpose",
                "--prompt", "Review {path} ({lines} lines)", "--output-schema", "schema.json",
                "--output", "reviews.csv", "--state-dir", str(state), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "job_started"
    assert kinds.count("job_row_finished") == 2
    assert kinds[-2:] == ["job_finished", "job_summary"]
    summary = lines[-1]
    assert summary["status"] == "completed"
    assert (summary["total"], summary["completed"], summary["failed"]) == (2, 2, 0)
    assert summary["output_path"] == str(tmp_path / "reviews.csv")
    finished = [line for line in lines if line["type"] == "job_row_finished"]
    assert [line["completed"] for line in finished] == [1, 2] or sorted(
        line["completed"] for line in finished
    ) == [1, 2]
    header, rows = read_csv(tmp_path / "reviews.csv")
    assert header == ["path", "lines", *JOB_COLUMNS]
    assert [json.loads(row["result_json"]) for row in rows] == [{"verdict": "ok"}] * 2


def test_hostile_cells_are_data(tmp_path: Path, state: Path) -> None:
    """A huge field, formula-looking cells and control characters go through as data."""
    huge = "A" * 200_000
    source = write_csv(
        tmp_path / "hostile.csv",
        ["name", "note"],
        [['=HYPERLINK("http://x")', huge], ["+1+1", "@SUM(A1)"], ["-2", "\x1b[31mred\x07"]],
    )
    done = jobs(tmp_path, "run", str(source), "--agent", "general-purpose",
                "--prompt", "Look at {name}", "--output", "out.csv",
                "--state-dir", str(state))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "\x1b[31m" not in done.stdout
    _, rows = read_csv(tmp_path / "out.csv")
    assert [row["name"] for row in rows] == ['=HYPERLINK("http://x")', "+1+1", "-2"]
    assert rows[0]["note"] == huge
    assert rows[1]["note"] == "@SUM(A1)"
    assert rows[2]["note"] == "\x1b[31mred\x07"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.csv", "--agent", "general-purpose", "--prompt", "x"], "is not a file"),
        (["rows.txt", "--agent", "general-purpose", "--prompt", "x"], "neither .csv nor .jsonl"),
        (["rows.csv", "--agent", "general-purpose", "--prompt", "{nope}"], "nope"),
        (["rows.csv", "--agent", "no-such-agent", "--prompt", "x"], "no-such-agent"),
        (["rows.csv", "--agent", "general-purpose", "--prompt", "x", "--max-concurrency", "0"],
         "--max-concurrency must be at least 1"),
        (["rows.csv", "--agent", "general-purpose", "--prompt", "x", "--max-runtime", "0"],
         "--max-runtime must be a number of seconds above 0"),
        (["rows.csv", "--agent", "general-purpose", "--prompt", "x", "--workers", "2"],
         "--workers needs --backend ray"),
        (["rows.csv", "--agent", "general-purpose", "--prompt", "x", "--address", "h:1"],
         "--address needs --backend ray"),
        (["rows.csv", "--agent", "general-purpose", "--prompt", "x", "--output-schema", "no.json"],
         "--output-schema"),
        (["rows.csv", "--agent", "general-purpose", "--prompt", "x", "--cwd", "nowhere"],
         "is not a readable directory"),
    ],
)  # fmt: skip
def test_each_user_error_is_one_line_and_exit_2(
    tmp_path: Path,
    state: Path,
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In process (``main``), to keep the suite fast; the subprocess tests cover the rest."""
    write_csv(tmp_path / "rows.csv", ["a"], [["1"]])
    (tmp_path / "rows.txt").write_text("a\n1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code = main(["jobs", "run", *args, "--state-dir", str(state), "--json"])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert out == ""  # with --json, no job_summary for a job that never started
    assert list(tmp_path.glob("rows.*.csv")) == []


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``subagents jobs ARGS`` in this process (list, show and cancel open no runtime)."""
    code = main(["jobs", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["show", "cancel", "resume"])
def test_show_cancel_and_resume_of_an_unknown_job_are_one_line(
    state: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = in_process(capsys, command, "0123abcd", "--state-dir", str(state))
    assert code == 2, err
    assert "No job '0123abcd'" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_list_show_and_cancel_after_a_job(
    tmp_path: Path, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_csv(tmp_path / "rows.csv", ["n"], [["1"], ["2"]])
    done = jobs(tmp_path, "run", "rows.csv", "--agent", "general-purpose", "--prompt", "n={n}",
                "--state-dir", str(state), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    job_id = json_lines(done.stdout)[-1]["job_id"]
    code, out, err = in_process(capsys, "list", "--state-dir", str(state))
    assert code == 0, err
    assert job_id in out
    assert "completed" in out
    code, out, _ = in_process(capsys, "list", "--state-dir", str(state), "--json")
    listed = json_lines(out)
    assert [(j["job_id"], j["status"], j["total"]) for j in listed] == [(job_id, "completed", 2)]
    code, out, err = in_process(capsys, "show", job_id, "--state-dir", str(state))
    assert code == 0, err
    assert "2 completed, 0 failed, 0 pending" in out
    code, out, _ = in_process(capsys, "show", job_id, "--state-dir", str(state), "--json")
    assert json.loads(out)["output_path"] == str(tmp_path / f"rows.{job_id}.csv")
    code, out, _ = in_process(capsys, "cancel", job_id, "--state-dir", str(state))
    assert code == 0
    assert "already completed" in out
    code, out, _ = in_process(capsys, "list", "--state-dir", str(tmp_path / "other"))
    assert code == 0
    assert "no jobs" in out


def test_ctrl_c_leaves_a_job_that_resume_finishes_without_repeating_a_row(
    tmp_path: Path, state: Path
) -> None:
    count = 200
    write_csv(tmp_path / "rows.csv", ["n"], [[str(i)] for i in range(count)])
    process = subprocess.Popen(
        [*COMMAND, "run", "rows.csv", "--agent", "general-purpose", "--prompt", "n={n}",
         "--output", "out.csv", "--state-dir", str(state), "--max-concurrency", "1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # see rest_of
        env=environment(),
        cwd=tmp_path,
    )  # fmt: skip
    assert process.stdout is not None
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + TIMEOUT
    for line in process.stdout:
        seen.append(json.loads(line))
        if seen[-1]["type"] == "job_row_finished":
            process.send_signal(signal.SIGINT)
            break
        assert time.monotonic() < deadline
    rest, errors = rest_of(process, TIMEOUT)
    seen += json_lines(rest)
    assert process.returncode == 130, errors
    job_id = seen[0]["job_id"]
    assert seen[-1]["type"] == "job_summary"
    done_before = seen[-1]["completed"]
    assert 1 <= done_before < count
    assert f"subagents jobs resume {job_id}" in errors
    assert not (tmp_path / "out.csv").exists()
    shown = jobs(tmp_path, "show", job_id, "--state-dir", str(state))
    assert "interrupted" in shown.stdout, shown.stdout
    assert f"resume it with: subagents jobs resume {job_id}" in shown.stdout
    resumed = jobs(tmp_path, "resume", job_id, "--state-dir", str(state), "--json")
    assert resumed.returncode == 0, resumed.stderr
    lines = json_lines(resumed.stdout)
    assert lines[0]["type"] == "job_started"
    assert lines[0]["resumed"] is True
    assert lines[0]["pending"] == count - done_before
    ran = [line["item_id"] for line in lines if line["type"] == "job_row_finished"]
    assert len(ran) == count - done_before
    _, rows = read_csv(tmp_path / "out.csv")
    assert sorted(int(row["n"]) for row in rows) == list(range(count))
    assert len({row["item_id"] for row in rows}) == count
    assert {row["status"] for row in rows} == {"completed"}


def test_without_a_terminal_each_row_is_a_plain_line(tmp_path: Path, state: Path) -> None:
    write_csv(tmp_path / "rows.csv", ["n"], [["1"], ["2"], ["3"]])
    done = jobs(tmp_path, "run", "rows.csv", "--agent", "general-purpose", "--prompt", "n={n}",
                "--state-dir", str(state))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout
    assert re.search(r"job \S+ started on local: 3 of 3 rows to run", done.stdout)
    for item in ("row-1", "row-2", "row-3"):
        assert re.search(rf"row {item} completed \(\d/3 done, 0 failed\)", done.stdout)


def test_the_progress_bar_shows_rate_and_eta_on_a_terminal(tmp_path: Path, state: Path) -> None:
    write_csv(tmp_path / "rows.csv", ["n"], [[str(i)] for i in range(40)])
    primary, secondary = pty.openpty()
    env = environment()
    env.update({"LINES": "50", "TERM": "xterm-256color"})
    process = subprocess.Popen(
        [*COMMAND, "run", "rows.csv", "--agent", "general-purpose", "--prompt", "n={n}",
         "--state-dir", str(state)],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=env,
        cwd=tmp_path,
        close_fds=True,
    )  # fmt: skip
    os.close(secondary)
    output = bytearray()
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], deadline - time.monotonic())
        if not ready:
            break
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal closed: the command exited
            break
        if not chunk:
            break
        output += chunk
    process.wait(timeout=TIMEOUT)
    os.close(primary)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode("utf-8", "replace"))
    assert process.returncode == 0, text[-2000:]
    assert "40/40" in text
    assert "rows/s" in text
    assert "ETA" in text
    assert "0 failed" in text
    assert re.search(r"job \S+ completed: 40 rows, 40 completed, 0 failed", text)


def test_a_running_job_is_locked_and_cancel_stops_it_for_a_resume(
    tmp_path: Path, state: Path
) -> None:
    """Two processes never run one job at once; ``cancel`` stops the one that does.

    The running process is suspended (SIGSTOP) after its first row, so it holds
    the job's lock while the other commands run, however fast its rows are.
    """
    count = 150
    write_csv(tmp_path / "rows.csv", ["n"], [[str(i)] for i in range(count)])
    process = subprocess.Popen(
        [*COMMAND, "run", "rows.csv", "--agent", "general-purpose", "--prompt", "n={n}",
         "--output", "out.csv", "--state-dir", str(state), "--max-concurrency", "1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # see rest_of
        env=environment(),
        cwd=tmp_path,
    )  # fmt: skip
    assert process.stdout is not None
    seen = [json.loads(process.stdout.readline())]
    assert seen[0]["type"] == "job_started"
    job_id = seen[0]["job_id"]
    while seen[-1]["type"] != "job_row_finished":
        seen.append(json.loads(process.stdout.readline()))
    process.send_signal(signal.SIGSTOP)
    try:
        locked = jobs(tmp_path, "resume", job_id, "--state-dir", str(state))
        assert locked.returncode == 1, locked.stderr
        assert "is running in another process" in locked.stderr
        assert len(locked.stderr.strip().splitlines()) == 1, locked.stderr
        cancelled = jobs(tmp_path, "cancel", job_id, "--state-dir", str(state))
        assert cancelled.returncode == 0, cancelled.stderr
        assert f"job {job_id} cancelled" in cancelled.stdout
    finally:
        process.send_signal(signal.SIGCONT)
        rest, errors = rest_of(process, TIMEOUT)
    lines = json_lines(rest)
    assert process.returncode == 1, errors
    assert lines[-1]["type"] == "job_summary"
    assert lines[-1]["status"] == "cancelled"
    assert lines[-1]["completed"] < count
    assert f"subagents jobs resume {job_id}" in errors
    resumed = jobs(tmp_path, "resume", job_id, "--state-dir", str(state), "--json")
    assert resumed.returncode == 0, resumed.stderr
    _, rows = read_csv(tmp_path / "out.csv")
    assert len({row["item_id"] for row in rows}) == len(rows) == count
