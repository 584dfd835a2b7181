"""``bench/bench_instructions.py``: instructions per agent under callgrind, its plumbing.

The counts themselves need valgrind and minutes; these tests run the workload
in process, and the counting through a stand-in for valgrind.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench_scripts import load_bench_script

REPORT = "==4242== \n==4242== Events    : Ir\n==4242== Collected : 123456789\n==4242== \n"


@pytest.fixture(scope="module")
def module() -> ModuleType:
    return load_bench_script("bench_instructions.py", "_subagents_bench_instructions")


def test_the_count_is_read_from_callgrinds_report(module: ModuleType) -> None:
    assert module.collected(REPORT) == 123_456_789
    with pytest.raises(module.CountError, match="no single count"):
        module.collected("==1== some other line\n")
    with pytest.raises(module.CountError, match="no single count"):
        module.collected(REPORT + REPORT)  # two processes counted: which one?


def test_a_count_runs_this_script_as_a_child_under_callgrind(module: ModuleType) -> None:
    seen: list[tuple[list[str], dict[str, Any]]] = []

    def runner(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        seen.append((command, options))
        return subprocess.CompletedProcess(command, 0, "", REPORT)

    count = module.count("subagents", 7, valgrind="/opt/valgrind", runner=runner)
    assert count == 123_456_789
    [(command, options)] = seen
    assert command[:2] == ["/opt/valgrind", "--tool=callgrind"]
    assert command[3:] == [
        sys.executable,
        str(Path(module.__file__).resolve()),
        "--child",
        "subagents",
        "7",
        "10",
    ]
    assert options["env"]["PYTHONHASHSEED"] == "0"  # the same dict layouts in every child
    assert options["timeout"] == module.CHILD_TIMEOUT


def test_a_failed_child_or_a_missing_valgrind_is_a_clear_error(
    module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 3, "", "Traceback: boom\n")

    def hanging(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(command, options["timeout"])

    with pytest.raises(module.CountError, match=r"(?s)kernel with 5 agents failed.*exit 3.*boom"):
        module.count("kernel", 5, valgrind="/opt/valgrind", runner=failing)
    with pytest.raises(module.CountError, match=r"ran over 1800 s under callgrind.*--quick"):
        module.count("kernel", 5, valgrind="/opt/valgrind", runner=hanging)
    monkeypatch.setattr(module.shutil, "which", lambda name: None)
    with pytest.raises(module.CountError, match="apt install valgrind"):
        module.count("kernel", 5)
    assert module.main(["--quick"]) == 1  # said on stderr, no traceback


def test_an_agent_costs_the_difference_between_two_sizes(module: ModuleType) -> None:
    """Per agent is the slope: what the process costs anyway (imports, the runtime's
    opening) cancels out."""
    fixed = {"kernel": 900_000_000, "subagents": 1_400_000_000}
    slope = {"kernel": 1_500_000, "subagents": 3_300_000}
    asked: list[tuple[str, int, bool]] = []

    def counter(path: str, agents: int, *, turns: int, collector: bool) -> int:
        assert turns == 10
        asked.append((path, agents, collector))
        return fixed[path] + slope[path] * agents

    results = module.measure(["kernel", "subagents"], 20, 60, counter=counter, jobs=1)
    assert [(r.path, r.per_agent) for r in results] == [
        ("kernel", 1_500_000),
        ("subagents", 3_300_000),
    ]
    assert sorted(asked) == sorted(
        (path, n, False) for path in ("kernel", "subagents") for n in (20, 60)
    )
    table = module.table(results)
    assert "| subagents | 3.300M | 330.0k | 2.20x |" in table
    with pytest.raises(ValueError, match="0 < small < large"):
        module.measure(["kernel"], 60, 20, counter=counter)


def test_split_tells_once_per_agent_from_per_turn(module: ModuleType, tmp_path: Path) -> None:
    """Agents of 2 and of 10 turns: the slope between them is a turn, the rest once per
    agent; each against the first path's."""
    once = {"kernel": 400_000, "subagents": 1_500_000}
    turn = {"kernel": 115_000, "subagents": 175_000}
    asked: list[tuple[str, int, int]] = []

    def counter(path: str, agents: int, *, turns: int, collector: bool) -> int:
        asked.append((path, agents, turns))
        return 4_000_000_000 + agents * (once[path] + turns * turn[path])

    results = module.measure(
        ["kernel", "subagents"], 100, 200, counter=counter, jobs=2, turns=(2, 10)
    )
    assert sorted(asked) == sorted(
        (path, n, t) for path in once for n in (100, 200) for t in (2, 10)
    )
    splits = module.split(results)
    assert [(s.path, round(s.once), round(s.per_turn)) for s in splits] == [
        ("kernel", 400_000, 115_000),
        ("subagents", 1_500_000, 175_000),
    ]
    table = module.split_table(splits)
    assert "| subagents | 1500k | 3.75x | 175.0k | 1.52x |" in table
    with pytest.raises(ValueError, match="runs of two lengths"):
        module.split([r for r in results if r.turns == 10])


def test_split_is_written_to_the_json(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def counter(path: str, agents: int, *, turns: int, collector: bool) -> int:
        return 1_000_000_000 + agents * (300_000 + turns * 100_000)

    monkeypatch.setattr(module, "count", counter)
    out = tmp_path / "counts.json"
    assert module.main(["--quick", "--split", "--only", "kernel", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    [row] = document["split"]
    assert row["path"] == "kernel"
    assert round(row["once"]) == 300_000
    assert round(row["per_turn"]) == 100_000
    assert [r["turns"] for r in document["results"]] == [10]


@pytest.mark.parametrize("path", ["kernel", "subagents", "no_transcripts"])
def test_each_path_runs_its_agents_in_the_child(module: ModuleType, path: str) -> None:
    """What a child runs (here in process, with no callgrind): the workload completes,
    and the collector is back on afterwards (the child turns it off for the count)."""
    assert module.main(["--child", path, "3", "10"]) == 0
    assert gc.isenabled()
    assert module.main(["--child", path, "2", "2"]) == 0  # agents of 2 turns complete too


def test_an_unknown_path_is_refused(module: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="expected one of kernel, subagents, no_transcripts"):
        module.run_path("asyncio", 3, tmp_path)
