"""``subagents bench`` on tiny workloads, in process: the JSON it writes and what it skips."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pytest

from subagents.cli import _bench, build_parser
from subagents.cli._bench.scenarios import (
    IMPLS,
    SCENARIOS,
    Sizes,
    find_bench_dir,
    load_scenarios,
)

TINY = Sizes(
    kernel={
        "spawn_exit": 20,
        "request_reply": 50,
        "fan_out": 40,
        "fan_out_actors": 4,
        "pubsub_events": 10,
        "pubsub_subscribers": 4,
        "tree_cancel": 30,
        "idle_memory": 20,
    },
    reps=1,
    agent_reps=1,
    corpus_reps=1,
    turns_agents=3,
    latency=0.005,
    efficiency_divisor=100,  # 1, 10 and 100 agents
    transcripts_agents=2,
    function_calls=20,
    mcp_calls=10,
    board_members=5,
    board_tasks=50,
    team_members=4,
    team_messages=3,
    runtime_agents=3,
    runtime_idle_agents=3,
    spawn_exit_reps=2,
)
RECORD_KEYS = {"scenario", "impl", "n", "unit", "min", "median", "reps"}


def bench(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    args = build_parser().parse_args(["bench", *argv])
    code = _bench.execute(args, sizes=TINY, out=out)
    return code, out.getvalue()


def test_every_scenario_is_written_with_the_documented_schema(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    code, output = bench("--json", str(path))
    assert code == 0, output
    payload = json.loads(path.read_text())
    assert set(payload) == {"versions", "records"}
    assert payload["versions"]["python"]
    records = payload["records"]
    for record in records:
        assert set(record) == RECORD_KEYS
        assert record["impl"] in IMPLS
        assert record["scenario"] in SCENARIOS
        assert record["min"] <= record["median"]
        assert record["reps"] >= 1
        assert record["n"] >= 1
    pairs = {(r["scenario"], r["impl"]) for r in records}
    ran = {scenario for scenario, _ in pairs}
    # the corpus lives beside the checkout; without it corpus_load is skipped with a note
    assert ran | {"corpus_load"} == set(SCENARIOS)
    if "corpus_load" not in ran:
        assert "corpus_load: skipped" in output
    for scenario in ("spawn_exit", "request_reply", "fan_out", "pubsub", "tree_cancel"):
        assert {(scenario, "subagents"), (scenario, "trio")} <= pairs
        assert next(r for r in records if r["scenario"] == scenario)["unit"] == "s"
    assert ("idle_memory", "subagents") in pairs
    # a function tool through the registry against its function awaited directly
    assert {("function_tool_call", "subagents"), ("function_tool_call", "trio")} <= pairs
    assert "| function_tool_call | 20 calls (" in output
    # round trips to a stdio MCP server against the same function tool, in one run
    assert {("mcp_call", "subagents"), ("mcp_call", "trio")} <= pairs
    assert "| mcp_call | 10 round trips (" in output
    # claims on the board actor against a lock and a dict, every task claimed once
    board = [r for r in records if r["scenario"] == "board_claims"]
    assert {r["impl"] for r in board} == {"subagents", "trio"}
    assert all(r["n"] == 50 for r in board)
    assert "| board_claims | 50 claims (" in output
    # peer messages round a ring of teammates against trio channels, every one delivered
    ring = [r for r in records if r["scenario"] == "team_messages"]
    assert {r["impl"] for r in ring} == {"subagents", "trio"}
    assert all(r["n"] == 12 for r in ring)
    assert "| team_messages | 12 messages (" in output
    for scenario in ("request_reply", "fan_out"):
        assert (scenario, "asyncio") in pairs
        has_autogen = importlib.util.find_spec("autogen_core") is not None
        assert ((scenario, "autogen") in pairs) is has_autogen
    assert "| request_reply |" in output
    assert "targets met" in output
    # issue 17: the open_runtime path beside the kernel-agent path and raw Trio, in one run
    for scenario in ("runtime_turns", "runtime_turns_cpu"):
        assert {
            (scenario, impl) for impl in ("subagents", "no_transcripts", "kernel", "trio")
        } <= pairs
    assert next(r for r in records if r["scenario"] == "runtime_turns_cpu")["unit"] == "us/turn"
    for scenario in ("runtime_efficiency_1000", "runtime_efficiency_10000", "runtime_idle_memory"):
        assert {(scenario, impl) for impl in ("subagents", "kernel", "trio")} <= pairs
    assert "| open_runtime path |" in output
    assert "| runtime_turns_cpu | 30 turns |" in output
    assert "x kernel:" in output
    spawn_exit = [r for r in records if r["scenario"] == "spawn_exit"]
    assert all(r["reps"] == 2 for r in spawn_exit)  # spawn_exit_reps, not reps


def test_a_missing_autogen_is_reported_as_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = find_bench_dir()
    assert folder is not None
    compare = load_scenarios(folder)["bench_compare"]
    monkeypatch.setattr(compare, "autogen_available", lambda: False)
    path = tmp_path / "bench.json"
    code, output = bench("--only", "request_reply", "--only", "fan_out", "--json", str(path))
    assert code == 0, output
    assert "autogen: skipped (autogen-core is not installed" in output
    records = json.loads(path.read_text())["records"]
    assert {(r["scenario"], r["impl"]) for r in records} == {
        (scenario, impl)
        for scenario in ("request_reply", "fan_out")
        for impl in ("subagents", "trio", "asyncio")
    }


def test_bad_requests_fail_before_running(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = bench("--only", "nope")
    assert code == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err
    monkeypatch.setattr(_bench, "matplotlib_missing", lambda: True)
    code, _ = bench("--chart", "out.png")
    assert code == 2
    assert "--chart needs matplotlib" in capsys.readouterr().err
    monkeypatch.setattr(_bench, "find_bench_dir", lambda: None)
    code, _ = bench("--only", "fan_out")
    assert code == 2
    assert "run it from a checkout" in capsys.readouterr().err


def test_the_chart_is_drawn(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    chart = tmp_path / "chart.png"
    code, output = bench(
        "--only", "efficiency_100", "--only", "efficiency_1000", "--chart", str(chart)
    )
    assert code == 0, output
    assert chart.read_bytes().startswith(b"\x89PNG")


def test_mcp_call_is_skipped_with_a_note_when_its_server_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = find_bench_dir()
    assert folder is not None
    agents = load_scenarios(folder)["bench_agents"]
    monkeypatch.setattr(agents, "MCP_ADD_SERVER", tmp_path / "no-such-server.py")
    path = tmp_path / "bench.json"
    code, output = bench("--only", "mcp_call", "--json", str(path))
    assert code == 0, output
    assert "note: mcp_call: skipped (the MCP server did not start:" in output
    assert json.loads(path.read_text())["records"] == []
