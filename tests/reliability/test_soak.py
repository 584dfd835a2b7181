"""Reliability: a short run of the soak (``bench/soak.py``) keeps every promise.

The soak spawns, messages, closes, resumes and cancels scripted agents at
random with faults injected, reopening the runtime on the same state
directory, while :class:`subagents.testing.InvariantChecker` reads every
event. Here it runs in-process for 3 seconds with a fixed seed; run
``pytest tests/reliability`` for this folder alone, and
``python bench/soak.py --seconds 120`` for the real thing.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio

from subagents import testing
from subagents.runtime import Runtime
from subagents.runtime._agent_record import AgentRecord
from tests.bench_scripts import load_bench_script

REQUIRED = ("operations", "peak_live", "events", "dropped", "rss_start", "rss_end", "violations")


def _load_soak() -> ModuleType:
    return load_bench_script("soak.py", "subagents_bench_soak")


def test_a_short_soak_reports_every_key_and_no_violation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    soak = _load_soak()
    code = soak.main(["--seconds", "3", "--seed", "11", "--max-threads", "8"])
    out = capsys.readouterr().out
    report = json.loads(out.strip().splitlines()[-1])
    for key in (*REQUIRED, "seed", "seconds", "agents_spawned", "resumes", "closes", "faults"):
        assert key in report, key
    assert report["violations"] == 0, report["violation_list"]
    assert code == 0
    assert report["seed"] == 11
    assert report["operations"] > 0
    assert report["agents_spawned"] > 0
    assert 0 < report["peak_live"] <= 8
    assert report["events"] == report["checked_events"] > 0
    assert report["rss_end"] - report["rss_start"] <= report["rss_bound"]
    assert report["blocks_end"] <= report["blocks_start"] * (1 + report["blocks_bound"])


def test_the_memory_readings_count_neither_a_closed_runtime_nor_the_checkers_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live-objects bound is on what outlives a runtime, not on what the soak keeps."""
    soak = _load_soak()
    monkeypatch.setattr(soak, "PROGRESS_EVERY", 0.05)  # the progress task reads the runtime
    run = soak.Soak(seconds=2.0, seed=7, max_threads=8, root=tmp_path)
    reading = soak.python_blocks
    seen: list[tuple[int, int]] = []

    def spied() -> int:
        blocks: int = reading()  # after a full collection
        runtimes = sum(1 for o in gc.get_objects() if isinstance(o, Runtime))
        seen.append((runtimes, len(run.checker.final_statuses())))
        return blocks

    monkeypatch.setattr(soak, "python_blocks", spied)
    report = trio.run(run.run)
    assert report["violations"] == 0, report["violation_list"]
    assert report["agents_spawned"] > 0
    assert seen == [(0, 0), (0, 0)]  # the warm-up's reading and the end's


def test_a_runtime_that_keeps_its_agents_breaks_the_live_objects_bound(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    soak = _load_soak()
    # A leak: every agent's record kept for good, with what it allocated. Weighted
    # (5,000 objects an agent) so that it shows even when a loaded machine (or a test
    # run sharing the cores with another) gets through only a few dozen agents in the
    # 3 s: the detector is what this test checks.
    kept: list[tuple[AgentRecord, list[object]]] = []
    original = AgentRecord.__init__

    def keeping(self: AgentRecord, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        kept.append((self, [object() for _ in range(5_000)]))

    monkeypatch.setattr(AgentRecord, "__init__", keeping)
    code = soak.main(["--seconds", "3", "--seed", "11", "--max-threads", "8"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert kept
    assert code == 1
    assert any("live Python objects grew" in v for v in report["violation_list"]), report


def test_bad_arguments_are_refused() -> None:
    soak = _load_soak()
    with pytest.raises(SystemExit):
        soak.main(["--seconds", "0"])


def test_a_violation_is_reported_and_fails_the_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    soak = _load_soak()
    # any memory reading breaks this bound, one that shrank under a loaded machine too
    monkeypatch.setattr(soak, "RSS_BOUND", -(2**50))
    code = soak.main(["--seconds", "1", "--seed", "3"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 1
    assert report["violations"] >= 1
    assert any("RSS grew" in v for v in report["violation_list"])


def test_the_checker_catches_a_broken_slot_bound(tmp_path: Path) -> None:
    soak = _load_soak()
    run = soak.Soak(seconds=1.0, seed=5, max_threads=8, root=tmp_path)
    run.checker = testing.InvariantChecker(max_threads=1, state_dir=run.state)
    report = trio.run(run.run)
    assert report["violations"] > 0
    assert any("live agents" in v for v in report["violation_list"])
