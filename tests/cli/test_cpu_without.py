"""``bench/cpu_without.py``: the CPU ratio of the path users take with parts switched off.

Its figures are times and take minutes; these tests check what the figures rest on: the
variants it parses, that a child switches its parts off and still runs both paths to the
end, that children of each variant alternate, and the table.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench_scripts import load_bench_script


@pytest.fixture(scope="module")
def module() -> ModuleType:
    return load_bench_script("cpu_without.py", "_subagents_cpu_without")


def test_a_variant_is_a_set_of_known_parts(module: ModuleType) -> None:
    assert module.parse_variant("none") == ()
    assert module.parse_variant("log_sink, transcript_writes,log_sink") == (
        "log_sink",
        "transcript_writes",
    )
    assert module.name(("log_sink", "transcript_writes")) == "log_sink,transcript_writes"
    assert module.name(()) == "none"
    with pytest.raises(ValueError, match=r"unknown part\(s\) 'logs'.*log_sink"):
        module.parse_variant("log_sink,logs")
    with pytest.raises(ValueError, match="comma-separated list"):
        module.parse_variant(" , ")


def test_a_child_switches_its_parts_off_and_runs_both_paths(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subagents.runtime._logging import _Sink
    from subagents.runtime._transcripts.file import DescriptorFile

    before = (_Sink.emit, DescriptorFile.write)
    figures = module.child(
        ("log_sink", "transcript_writes"), 3, 1, tmp_path, setattr_=monkeypatch.setattr
    )
    assert _Sink.emit is not before[0]
    assert DescriptorFile.write is not before[1]
    assert figures["kernel"] > 0
    assert figures["runtime"] > 0
    # The runtime's agents ran (the workload checks each ended with its goal), and with the
    # writes off none of their lines reached a file; the folders are kept for the caller.
    files = list(tmp_path.rglob("agent-*.jsonl"))
    assert len(files) == 3
    assert {path.stat().st_size for path in files} == {0}


def test_children_of_each_variant_alternate_round_by_round(module: ModuleType) -> None:
    """Side by side, in turn first and last: an hour's drift falls on every variant alike."""
    seen: list[tuple[str, ...]] = []

    def measure_child(parts: tuple[str, ...]) -> Mapping[str, float]:
        seen.append(parts)
        return {"kernel": 10.0, "runtime": 20.0 if not parts else 15.0 + len(seen) % 2}

    variants = [(), ("log_sink",)]
    results = module.measure(variants, 3, measure_child=measure_child)
    assert seen == [(), ("log_sink",), ("log_sink",), (), (), ("log_sink",)]
    assert [len(children) for children in results.values()] == [3, 3]
    table = module.table(results)
    assert "| (none: everything on) | 2.00x (2.00x to 2.00x) | 20.0 us | 10.0 us | 3 |" in table
    assert "| log_sink | 1.50x (1.50x to 1.60x) | 15.0 us | 10.0 us | 3 |" in table
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        module.measure(variants, 0, measure_child=measure_child)
    with pytest.raises(ValueError, match="each variant once"):
        module.measure([(), ()], 1, measure_child=measure_child)


def test_a_child_runs_this_scripts_child_in_a_fresh_process(
    module: ModuleType, tmp_path: Path
) -> None:
    seen: list[list[str]] = []

    def runner(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        seen.append(command)
        out = "a line of its own\n" + json.dumps({"kernel": 16.5, "runtime": 40.1})
        return subprocess.CompletedProcess(command, 0, out, "")

    figures = module.run_child(("progress_facts",), 7, 2, tmp_path, runner=runner)
    assert figures == {"kernel": 16.5, "runtime": 40.1}
    script = str(Path(module.__file__).resolve())
    assert seen == [[sys.executable, script, "--child", "progress_facts", "7", "2", str(tmp_path)]]

    def failing(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 1, "", "Traceback: boom")

    with pytest.raises(module.bench_instructions.CountError, match="boom"):
        module.run_child((), 7, 2, tmp_path, runner=failing)


def test_an_unknown_part_on_the_command_line_is_refused(
    module: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        module.main(["--variant", "transcripts"])
    assert exited.value.code == 2
    assert "unknown part(s) 'transcripts'" in capsys.readouterr().err
