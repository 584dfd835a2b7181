"""``bench/bench_bytecodes.py``: bytecodes per agent, function by function (Python 3.12+)."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest

from tests.bench_scripts import load_bench_script

needs_monitoring = pytest.mark.skipif(
    sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12's"
)


@pytest.fixture(scope="module")
def module() -> ModuleType:
    return load_bench_script("bench_bytecodes.py", "_subagents_bench_bytecodes")


def test_an_older_python_is_told_what_to_run_instead(module: ModuleType) -> None:
    with pytest.raises(module.CountError, match=r"3\.12 or later.*this is 3\.11\.7"):
        module.require_monitoring((3, 11, 7))
    module.require_monitoring((3, 12, 0))
    module.require_monitoring((3, 13, 1))


def test_an_agent_adds_the_difference_between_two_sizes(module: ModuleType) -> None:
    small = {"a.py:1 f": 1_000, "a.py:9 g": 300, "b.py:2 only_small": 50}
    large = {"a.py:1 f": 1_600, "a.py:9 g": 300, "b.py:5 only_large": 90}
    assert module.per_agent(small, large, (10, 20)) == {
        "a.py:1 f": 60.0,
        "a.py:9 g": 0.0,
        "b.py:2 only_small": -5.0,
        "b.py:5 only_large": 9.0,
    }
    with pytest.raises(ValueError, match="larger than the first"):
        module.per_agent(small, large, (20, 20))


def test_excess_ranks_what_a_path_adds_and_files_add_up(module: ModuleType) -> None:
    kernel = {"loop.py:1 turn": 100.0, "trio.py:5 run": 50.0}
    runtime = {"loop.py:1 turn": 110.0, "trio.py:5 run": 80.0, "log.py:3 line": 60.0}
    assert module.excess(runtime, kernel) == [
        ("log.py:3 line", 60.0),
        ("trio.py:5 run", 30.0),
        ("loop.py:1 turn", 10.0),
    ]
    assert module.by_file({"a.py:1 f": 2.0, "a.py:7 g": 3.0, "b.py:1 h": 4.0}) == [
        ("a.py", 5.0),
        ("b.py", 4.0),
    ]
    text = module.report({"kernel": kernel, "subagents": runtime}, top=2)
    assert "| kernel | 150 | 1.00x |" in text
    assert "| subagents | 250 | 1.67x |" in text
    assert "60  log.py:3 line" in text
    assert "loop.py:1 turn" not in text  # past the top two


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the refusal is for Python 3.11")
def test_main_refuses_on_python_3_11(
    module: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert module.main(["--sizes", "1", "2"]) == 1
    assert "needs Python 3.12 or later" in capsys.readouterr().err


@needs_monitoring
def test_a_function_is_counted_by_its_name_and_the_count_stops_with_the_run(
    module: ModuleType,
) -> None:
    def loop(n: int) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    small = module.count_in_process(lambda: loop(10))
    large = module.count_in_process(lambda: loop(110))
    [name] = [
        key
        for key in large
        if key.endswith(
            " test_a_function_is_counted_by_its_name_and_the_count_stops_with_the_run.<locals>.loop"
        )
    ]
    assert name.startswith("tests/cli/test_bench_bytecodes.py:")
    assert large[name] > small[name] > 0
    # Each pass of the loop runs the same few bytecodes: 100 more passes, 100 times them.
    assert (large[name] - small[name]) % 100 == 0
    after = module.count_in_process(lambda: None)  # the tool was given back, and taken again
    assert name not in after


@needs_monitoring
def test_a_child_counts_a_paths_agents(module: ModuleType) -> None:
    small = module.count("kernel", 1, turns=1, timeout=300)
    large = module.count("kernel", 2, turns=1, timeout=300)
    profile = module.per_agent(small, large, (1, 2))
    assert sum(profile.values()) > 1_000
    assert any(name.startswith("subagents/runtime/_loop.py:") for name in profile)
