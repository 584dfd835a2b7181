"""``bench/bench_misses.py``: cache misses per agent under cachegrind, its plumbing.

The counts themselves need valgrind and minutes; these tests read a real report's
format, and run the counting through a stand-in for valgrind.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench_scripts import load_bench_script

# The summary cachegrind 3.19 writes on stderr with --cache-sim=yes (one process).
REPORT = """\
==18983== I   refs:      4,287,767,409
==18983== I1  misses:       47,884,320
==18983== LLi misses:           27,211
==18983== I1  miss rate:          1.12%
==18983== LLi miss rate:          0.00%
==18983==
==18983== D   refs:      1,972,022,636  (1,301,837,138 rd   + 670,185,498 wr)
==18983== D1  misses:       41,933,110  (   34,940,886 rd   +   6,992,224 wr)
==18983== LLd misses:          819,353  (      108,153 rd   +     711,200 wr)
==18983== D1  miss rate:           2.1% (          2.7%     +         1.0%  )
==18983== LLd miss rate:           0.0% (          0.0%     +         0.1%  )
==18983==
==18983== LL refs:          89,817,430  (   82,825,206 rd   +   6,992,224 wr)
==18983== LL misses:           846,564  (      135,364 rd   +     711,200 wr)
==18983== LL miss rate:            0.0% (          0.0%     +         0.1%  )
"""


@pytest.fixture(scope="module")
def module() -> ModuleType:
    return load_bench_script("bench_misses.py", "_subagents_bench_misses")


def test_the_counts_are_read_from_cachegrinds_summary(module: ModuleType) -> None:
    assert module.summary(REPORT) == module.Counts(
        instructions=4_287_767_409,
        l1i_misses=47_884_320,
        l1d_misses=41_933_110,
        last_level_misses=846_564,
    )
    with pytest.raises(module.bench_instructions.CountError, match="no single last_level_misses"):
        module.summary(REPORT.replace("LL misses", "LL lost"))
    with pytest.raises(module.bench_instructions.CountError, match="no single instructions"):
        module.summary(REPORT + REPORT)  # two processes counted: which one?


def test_a_count_runs_the_instruction_counts_child_under_cachegrind(module: ModuleType) -> None:
    """The same child (and workload) as bench_instructions.py's, its caches simulated with
    the last level given, the hash seed fixed; ``--collector`` passed on."""
    seen: list[tuple[list[str], dict[str, Any]]] = []

    def runner(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        seen.append((command, options))
        return subprocess.CompletedProcess(command, 0, "", REPORT)

    counts = module.count("subagents", 7, valgrind="/opt/valgrind", runner=runner)
    assert counts.last_level_misses == 846_564
    module.count(
        "kernel", 3, last_level=4 << 20, ways=16, collector=True, valgrind="/v", runner=runner
    )
    (command, options), (second, _) = seen
    assert command[:4] == [
        "/opt/valgrind",
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--LL=524288,8,64",
    ]
    script = Path(module.__file__).resolve().parent / "bench_instructions.py"
    assert command[5:] == [sys.executable, str(script), "--child", "subagents", "7", "10"]
    assert options["env"]["PYTHONHASHSEED"] == "0"
    assert options["timeout"] == module.CHILD_TIMEOUT
    assert second[3] == "--LL=4194304,16,64"
    assert second[-4:] == ["kernel", "3", "10", "--collector"]


def test_a_failed_child_or_a_missing_valgrind_is_a_clear_error(
    module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 3, "", "Traceback: boom\n")

    def hanging(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(command, options["timeout"])

    error = module.bench_instructions.CountError
    with pytest.raises(error, match=r"(?s)kernel with 5 agents failed.*exit 3.*boom"):
        module.count("kernel", 5, valgrind="/opt/valgrind", runner=failing)
    with pytest.raises(error, match=r"ran over 2400 s under cachegrind.*--quick"):
        module.count("kernel", 5, valgrind="/opt/valgrind", runner=hanging)
    monkeypatch.setattr(module.shutil, "which", lambda name: None)
    with pytest.raises(error, match="apt install valgrind"):
        module.count("kernel", 5)
    assert module.main(["--quick", "--only", "kernel"]) == 1  # said on stderr, no traceback


def _counts(module: ModuleType, agents: int, instructions: int, misses: int) -> Any:
    return module.Counts(
        instructions=900_000_000 + instructions * agents,
        l1i_misses=5_000_000 + 30_000 * agents,
        l1d_misses=6_000_000 + 40_000 * agents,
        last_level_misses=700_000 + misses * agents,
    )


def test_an_agent_costs_the_difference_between_two_sizes(module: ModuleType) -> None:
    """Per agent is the slope (the process's start cancels out); the table puts each count
    beside the first path's."""
    per_agent = {"kernel": (1_500_000, 400), "subagents": (3_000_000, 5_600)}
    asked: list[tuple[str, int]] = []

    def counter(path: str, agents: int, turns: int) -> Any:
        assert turns == 10
        asked.append((path, agents))
        return _counts(module, agents, *per_agent[path])

    results = module.measure(["kernel", "subagents"], 20, 60, counter=counter, jobs=1)
    assert sorted(asked) == sorted((p, n) for p in per_agent for n in (20, 60))
    assert [r.per_agent["last_level_misses"] for r in results] == [400, 5_600]
    assert results[1].per_agent["instructions"] == 3_000_000
    table = module.table(results)
    assert "misses of 512 KiB" in table
    assert "| subagents | 3.000M | 2.00x | 70.0k | 1.00x | 5,600 | 14.00x |" in table
    with pytest.raises(ValueError, match="0 < small < large"):
        module.measure(["kernel"], 60, 20, counter=counter)


def test_main_prints_the_table_and_writes_the_json(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    asked: list[tuple[str, int, int, int, bool]] = []

    def count(
        path: str, agents: int, *, turns: int, last_level: int, ways: int, collector: bool
    ) -> Any:
        assert turns == 10
        asked.append((path, agents, last_level, ways, collector))
        return _counts(module, agents, 1_000_000, 300)

    monkeypatch.setattr(module, "count", count)
    out = tmp_path / "misses.json"
    argv = ["--sizes", "10", "30", "--only", "kernel", "--last-level", "65536", "--ways", "4"]
    assert module.main([*argv, "--json", str(out)]) == 0
    assert sorted(asked) == [("kernel", 10, 65536, 4, False), ("kernel", 30, 65536, 4, False)]
    assert "misses of 64 KiB" in capsys.readouterr().out
    document = json.loads(out.read_text())
    assert (document["last_level"], document["ways"]) == (65536, 4)
    [row] = document["results"]
    assert row["path"] == "kernel"
    assert row["per_agent"]["last_level_misses"] == 300


def test_split_tells_once_per_agent_from_each_turn(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """``--split`` counts agents of 2 turns beside those of 10: the slope between the two
    lengths is a turn's, the rest what the agent costs once, for every count."""
    # (instructions, misses) once per agent and per turn, by path.
    costs = {
        "kernel": ((400_000, 1_700), (116_000, 180)),
        "subagents": ((1_400_000, 11_900), (163_000, 550)),
    }
    asked: list[tuple[str, int, int]] = []

    def count(
        path: str, agents: int, *, turns: int, last_level: int, ways: int, collector: bool
    ) -> Any:
        asked.append((path, agents, turns))
        (once_i, once_m), (turn_i, turn_m) = costs[path]
        return _counts(module, agents, once_i + turns * turn_i, once_m + turns * turn_m)

    monkeypatch.setattr(module, "count", count)
    out = tmp_path / "misses.json"
    argv = ["--sizes", "10", "30", "--only", "kernel", "--only", "subagents", "--split"]
    assert module.main([*argv, "--json", str(out)]) == 0
    assert sorted(asked) == sorted(
        (path, n, turns) for path in costs for n in (10, 30) for turns in (2, 10)
    )
    printed = capsys.readouterr().out
    # The whole agent's table still reads agents of 10 turns only.
    assert "| subagents | 3.030M | 1.94x |" in printed
    assert "| subagents | 1,400k | 3.50x | 11,900 | 7.00x | 163k | 1.41x | 550 | 3.06x |" in printed
    document = json.loads(out.read_text())
    assert [row["turns"] for row in document["results"]] == [2, 10, 2, 10]
    kernel, subagents = document["split"]
    assert (kernel["path"], kernel["short_turns"]) == ("kernel", 2)
    assert subagents["once"]["last_level_misses"] == pytest.approx(11_900)
    assert subagents["per_turn"]["instructions"] == pytest.approx(163_000)
    with pytest.raises(ValueError, match="two lengths"):
        module.split(
            module.measure(["kernel"], 10, 30, counter=lambda *run: _counts(module, run[1], 1, 1))
        )
