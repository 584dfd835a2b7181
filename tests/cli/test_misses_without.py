"""``bench/misses_without.py``: misses per agent with one part of the path switched off.

The counts need valgrind and minutes; these tests check that each part it switches off
is still there to switch off (a rename would otherwise count nothing), that the agents
still run to completion without it, and the counting's plumbing through a stand-in.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench_scripts import load_bench_script
from tests.cli.test_bench_misses import REPORT


@pytest.fixture(scope="module")
def module() -> ModuleType:
    return load_bench_script("misses_without.py", "_subagents_misses_without")


@pytest.mark.parametrize("part", ["progress_facts", "kept_lines", "log_sink", "transcript_writes"])
def test_each_part_is_switched_off_and_the_agents_still_finish(
    module: ModuleType, part: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module_name, class_name, methods = module.PARTS[part]
    owner = getattr(__import__(module_name, fromlist=[class_name]), class_name)
    before = {name: getattr(owner, name) for name in methods}
    module.switch_off(part, monkeypatch.setattr)
    assert all(getattr(owner, name) is not before[name] for name in methods)
    # The workload checks that every agent ends with its goal after its 10 turns.
    module.bench_instructions.run_path("subagents", 3, tmp_path)


def test_without_transcript_writes_no_line_reaches_a_transcript(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer is told every byte went out (it goes on as if it had), and none did."""
    module.switch_off("transcript_writes", monkeypatch.setattr)
    module.bench_instructions.run_path("subagents", 3, tmp_path)
    files = list(tmp_path.rglob("agent-*.jsonl"))
    assert len(files) == 3
    assert [path.stat().st_size for path in files] == [0, 0, 0]


def test_a_part_that_is_gone_is_a_clear_error(
    module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match="unknown part 'log'"):
        module.switch_off("log")
    monkeypatch.setitem(
        module.PARTS,
        "renamed",
        ("subagents.runtime._progress.facts", "ProgressFeed", {"turn_begun": None}),
    )
    with pytest.raises(ValueError, match=r"ProgressFeed.turn_begun is gone"):
        module.switch_off("renamed", monkeypatch.setattr)


def test_a_count_runs_this_scripts_child_under_cachegrind(module: ModuleType) -> None:
    seen: list[list[str]] = []

    def runner(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        seen.append(command)
        assert options["env"]["PYTHONHASHSEED"] == "0"
        return subprocess.CompletedProcess(command, 0, "", REPORT)

    counts = module.count("kept_lines", 7, valgrind="/opt/valgrind", runner=runner)
    assert counts.last_level_misses == 846_564
    (command,) = seen
    assert command[:4] == [
        "/opt/valgrind",
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--LL=524288,8,64",
    ]
    script = str(Path(module.__file__).resolve())
    assert command[5:] == [sys.executable, script, "--child", "kept_lines", "7"]


def test_each_parts_share_is_its_difference_with_everything_on(module: ModuleType) -> None:
    """Per agent is the slope between the two sizes; with counts repeated, the table gives
    their mean and range (a count moves by a few hundred misses from one run to the next)."""
    per_agent = {
        "none": [(2_800_000, 9_000), (2_800_000, 9_400)],
        "kept_lines": [(2_780_000, 8_600), (2_780_000, 8_600)],
    }
    calls: dict[tuple[str, int], int] = {}

    def counter(part: str, agents: int) -> Any:
        index = calls.get((part, agents), 0)
        calls[part, agents] = index + 1
        instructions, misses = per_agent[part][index]
        return module.bench_misses.Counts(
            instructions=900_000_000 + instructions * agents,
            l1i_misses=0,
            l1d_misses=0,
            last_level_misses=700_000 + misses * agents,
        )

    results = module.measure(["kept_lines"], 20, 60, repeat=2, counter=counter, jobs=1)
    assert [run["last_level_misses"] for run in results["none"]] == [9_000, 9_400]
    table = module.table(results)
    assert "| everything on | 2.800M | 9,200 (9,000 to 9,400) |  |  |" in table
    assert (
        "| without kept_lines | 2.780M | 8,600 (8,600 to 8,600) | 20k (0.7%) | 600 (6.5%) |"
        in table
    )
    with pytest.raises(ValueError, match="0 < small < large"):
        module.measure(["kept_lines"], 60, 20, counter=counter)
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        module.measure(["kept_lines"], 20, 60, repeat=0, counter=counter)
