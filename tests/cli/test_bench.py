"""``subagents bench`` on tiny workloads, in process: the JSON it writes and what it skips."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from subagents.cli import _bench, build_parser
from subagents.cli._bench.report import peers_table, table
from subagents.cli._bench.scenarios import (
    IMPLS,
    PEER_SCENARIOS,
    SCENARIOS,
    Record,
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
    collector_agents=4,
)
RECORD_KEYS = {"scenario", "impl", "n", "unit", "min", "median", "reps"}


def bench(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    args = build_parser().parse_args(["bench", *argv])
    code = _bench.execute(args, sizes=TINY, out=out)
    return code, out.getvalue()


def without_peer_frameworks(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Make ``bench_peers`` see none of the peer frameworks installed; return the module."""
    folder = find_bench_dir()
    assert folder is not None
    peers = load_scenarios(folder)["bench_peers"]
    monkeypatch.setattr(peers, "missing_modules", lambda peer: list(peer.modules))
    return peers


JOBS_RAY = ("jobs_ray_10000", "jobs_overhead")


def without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``bench_jobs_ray`` see no Ray installed."""
    folder = find_bench_dir()
    assert folder is not None
    jobs = load_scenarios(folder)["bench_jobs_ray"]
    monkeypatch.setattr(
        jobs, "ray_missing", lambda: "Ray is not installed: pip install 'subagents[ray]'"
    )


@pytest.mark.timeout(180)
def test_the_jobs_scenarios_run_a_job_locally_and_on_ray_in_one_run(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    """Issue 19: jobs_ray_10000 (local and Ray, x ideal) and jobs_overhead's Ray half."""
    path = tmp_path / "bench.json"
    out = io.StringIO()
    args = build_parser().parse_args(
        ["bench", "--json", str(path), *(a for s in JOBS_RAY for a in ("--only", s))]
    )
    sizes = dataclasses.replace(TINY, jobs_rows=4 * 100, jobs_overhead_rows=4 * 100)
    code = _bench.execute(args, sizes=sizes, out=out)
    output = out.getvalue()
    assert code == 0, output
    records = json.loads(path.read_text())["records"]
    pairs = {(r["scenario"], r["impl"]): r for r in records}
    assert set(pairs) == {
        ("jobs_ray_10000", "local"),
        ("jobs_ray_10000", "ray"),
        ("jobs_ray_10000", "ray+freeze"),  # the workers' collector policy (issue 19)
        ("jobs_overhead", "ray"),
        ("jobs_overhead", "subagents"),  # the local half, rows through run_job
        ("jobs_overhead", "direct"),
    }
    assert pairs[("jobs_ray_10000", "ray")]["n"] == 4
    assert pairs[("jobs_ray_10000", "ray")]["unit"] == "x ideal"
    assert pairs[("jobs_overhead", "ray")]["unit"] == "s"
    assert "| jobs_ray_10000 | 4 rows |" in output
    assert "| jobs_ray_10000, workers' collector freeze | 4 rows |" in output
    assert "| jobs_overhead | 4 rows, zero latency |" in output
    assert "workers took" in output


def test_every_scenario_is_written_with_the_documented_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the peers (their own tests below) take a subprocess per measurement: not here
    without_peer_frameworks(monkeypatch)
    # nor Ray's workers (their own test below, on the session's cluster)
    without_ray(monkeypatch)
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
    assert ran | {"corpus_load"} | set(PEER_SCENARIOS) | set(JOBS_RAY) == set(SCENARIOS)
    assert "peers: skipped (no peer framework is installed" in output
    assert "jobs_ray_10000, jobs_overhead (ray): skipped (Ray is not installed" in output
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
    for scenario in ("runtime_turns", "runtime_turns_cpu", "runtime_turns_cpu_all"):
        assert {
            (scenario, impl) for impl in ("subagents", "no_transcripts", "kernel", "trio")
        } <= pairs
    assert next(r for r in records if r["scenario"] == "runtime_turns_cpu")["unit"] == "us/turn"
    for scenario in ("runtime_efficiency_1000", "runtime_efficiency_10000", "runtime_idle_memory"):
        assert {(scenario, impl) for impl in ("subagents", "kernel", "trio")} <= pairs
    assert "| open_runtime path |" in output
    assert "default [collector] policy (relaxed)" in output  # what the two paths compare
    assert "| runtime_turns_cpu | 30 turns |" in output
    # the transcripts' helper process counted in: never less than this process alone
    by_impl = {
        (r["scenario"], r["impl"]): r["min"]
        for r in records
        if r["scenario"].startswith("runtime_turns_cpu")
    }
    for impl, compare in (("subagents", float.__ge__), ("kernel", float.__eq__)):
        assert compare(by_impl["runtime_turns_cpu_all", impl], by_impl["runtime_turns_cpu", impl])
    assert "x kernel:" in output
    assert "note: runtime_turns_cpu, paired: open_runtime / kernel in each repetition" in output
    # that CPU split into each turn's and an agent's once, for every path but raw Trio
    for scenario, unit in (("runtime_turn_cpu", "us/turn"), ("runtime_agent_cpu", "us/agent")):
        split = {r["impl"]: r for r in records if r["scenario"] == scenario}
        assert set(split) == {"subagents", "no_transcripts", "kernel"}
        assert {r["unit"] for r in split.values()} == {unit}
    assert "| runtime_turn_cpu | 30 turns |" in output
    assert "| runtime_agent_cpu | 3 agents |" in output
    assert "note: runtime_turn_cpu, paired: open_runtime / kernel" in output
    assert "note: runtime_agent_cpu, paired: open_runtime / kernel" in output
    # issue 19: the collector policies, on both paths, in one run
    assert {
        ("collector_10000", impl)
        for impl in (
            "kernel",
            "kernel+relaxed",
            "kernel+freeze",
            "subagents",
            "subagents+relaxed",
            "subagents+freeze",
        )
    } <= pairs
    assert "| collector_10000 |" in output
    spawn_exit = [r for r in records if r["scenario"] == "spawn_exit"]
    assert all(r["reps"] == 2 for r in spawn_exit)  # spawn_exit_reps, not reps


def test_no_runtime_folder_is_deleted_before_the_run_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each open_runtime measurement gets a new folder, and all of them stay until the run
    ends: on ext4 without a journal, files made right after a mass deletion took 40 times
    as long to make, which slowed the next repetition's runtime (bench/README.md)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = find_bench_dir()
    assert folder is not None
    agents = load_scenarios(folder)["bench_agents"]
    real = agents.run_runtime_agents
    roots: list[Path] = []

    async def spy(*args: Any, root: Path, **kwargs: Any) -> float:
        assert all(earlier.is_dir() for earlier in roots)
        assert root not in roots
        assert not any(root.iterdir())
        roots.append(root)
        return float(await real(*args, root=root, **kwargs))

    monkeypatch.setattr(agents, "run_runtime_agents", spy)
    code, output = bench(
        "--reps",
        "2",
        "--only",
        "runtime_turns",
        "--only",
        "runtime_efficiency_1000",
        "--only",
        "transcripts_on",
    )
    assert code == 0, output
    assert len(roots) == 2 * 2 + 2 + 2  # on and off, then efficiency, then transcripts_on
    assert list(tmp_path.iterdir()) == []  # all of them removed at the end


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


# -- peers: the same agent workload on the frameworks users would pick instead ------------


def test_peers_are_skipped_cleanly_without_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    peers = without_peer_frameworks(monkeypatch)

    def no_subprocess(*args: object, **kwargs: object) -> None:
        raise AssertionError("a peer ran although none is installed")

    monkeypatch.setattr(peers, "run_once", no_subprocess)
    path = tmp_path / "bench.json"
    argv = [arg for scenario in PEER_SCENARIOS for arg in ("--only", scenario)]
    code, output = bench(*argv, "--json", str(path))
    assert code == 0, output
    assert (
        "note: peers: skipped (no peer framework is installed; pip install 'subagents[peers]')"
        in output
    )
    assert json.loads(path.read_text())["records"] == []
    assert "Peers (" not in output


def load_peer_script(monkeypatch: pytest.MonkeyPatch, name: str) -> ModuleType:
    """Import ``bench/peers/<name>.py`` (it puts its folder on ``sys.path``: undone after)."""
    folder = find_bench_dir()
    assert folder is not None
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location(f"_test_{name}", folder / "peers" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("transcripts", [False, True])
async def test_our_peer_workload_makes_ten_tool_calls_per_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transcripts: bool
) -> None:
    """Ours through ``open_runtime(tools=[add])`` + ``rt.spawn``: exactly N x 10 ``add`` calls."""
    ours = load_peer_script(monkeypatch, "peer_subagents")
    calls = await ours.run_agents(3, 0.0, transcripts=transcripts, root=tmp_path)
    assert calls == ours.Counter.calls == 3 * 10


def test_our_peer_runs_keep_their_state_folders_until_the_measurement_is_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deleting our transcripts is no part of the workload (no peer writes files): each
    run's folder, the warm-up's too, is still there when the measured run ends, and gone
    once the script has printed its measurement."""
    ours = load_peer_script(monkeypatch, "peer_subagents")
    seen: list[list[Path]] = []
    earlier_kept: list[bool] = []  # at each run's end: the earlier runs' files still there
    real = ours.run_agents

    async def spying(agents: int, latency: float, *, transcripts: bool, root: Path) -> int:
        calls = await real(agents, latency, transcripts=transcripts, root=root)
        earlier_kept.append(all(p.exists() for files in seen for p in files))
        seen.append(sorted(root.rglob("*.jsonl")))
        return int(calls)

    monkeypatch.setattr(ours, "run_agents", spying)
    monkeypatch.setattr(ours.sys.modules["_harness"], "WARMUP_AGENTS", 2)
    assert ours._main(["--agents", "3", "--transcripts"]) == 0

    assert len(seen) == 2  # the warm-up, then the measured run
    warmup, measured = seen
    assert len([p for p in warmup if p.name.startswith("agent-")]) == 2
    assert earlier_kept == [True, True]
    assert len([p for p in measured if p.name.startswith("agent-")]) == 3
    assert all(p.exists() is False for p in warmup + measured)
    assert '"tool_calls": 30' in capsys.readouterr().out


def test_the_harness_refuses_a_workload_that_was_not_done(monkeypatch: pytest.MonkeyPatch) -> None:
    harness = load_peer_script(monkeypatch, "_harness")
    assert harness.check(["done"] * 2, 20, 2) == 20
    with pytest.raises(harness.WorkloadError, match="19 tool calls for 2 agents"):
        harness.check(["done"] * 2, 19, 2)
    with pytest.raises(harness.WorkloadError, match="1 of 2 agents ended with"):
        harness.check(["done", "oops"], 20, 2)


def test_a_peer_run_is_a_subprocess_that_reports_its_workload() -> None:
    folder = find_bench_dir()
    assert folder is not None
    peers = load_scenarios(folder)["bench_peers"]
    ours = next(peer for peer in peers.PEERS if peer.impl == "subagents")
    outcome = peers.run_once(ours, 2, 0.0, timeout=60.0)
    assert outcome.error is None
    assert outcome.data["tool_calls"] == 20
    assert outcome.data["cpu"] > 0


def test_a_peer_that_hangs_is_killed_and_reported_as_over_the_timeout(tmp_path: Path) -> None:
    folder = find_bench_dir()
    assert folder is not None
    peers = load_scenarios(folder)["bench_peers"]
    script = tmp_path / "hangs.py"
    script.write_text(
        "import json, sys, time\n"
        "print(json.dumps({'started': time.time()}), flush=True)\n"
        "time.sleep(600)\n"
    )
    outcome = peers.run_once(peers.Peer("hangs", str(script)), 1, 0.0, timeout=0.2)
    assert outcome == peers.Outcome(over=0.2)
    script.write_text("import sys\nsys.exit('broken framework')\n")
    outcome = peers.run_once(peers.Peer("broken", str(script)), 1, 0.0, timeout=5.0)
    assert outcome.error == "broken framework"


def test_the_peers_table_shows_each_framework_and_the_cpu_target() -> None:
    records = [
        Record("peer_turns", "subagents", 1000, "s", 0.5, 0.5, 1),
        Record("peer_cpu", "subagents", 1000, "us/turn", 100.0, 100.0, 1),
        Record("peer_cpu", "subagents+transcripts", 1000, "us/turn", 300.0, 300.0, 1),
        Record("peer_cpu", "autogen-agentchat", 1000, "us/turn", 600.0, 600.0, 1),
        Record("peer_cpu", "langgraph", 1000, "us/turn", 2000.0, 2000.0, 1),
        Record("peer_efficiency_10000", "langgraph", 10000, "over s", 120.0, 120.0, 1),
        Record("peer_memory", "langgraph", 100, "bytes/agent", 2048.0, 2048.0, 1),
    ]
    lines = table(records).splitlines()
    assert "| framework | turns/s | CPU per turn | efficiency 10,000 | per agent |" in lines
    assert "| subagents | 2,000/s | 100 us |  |  |" in lines
    assert "| langgraph |  | 2,000 us | > 120 s | 2.0 KiB |" in lines
    # ours with transcripts is not a peer: the nearest peer is autogen, at 6x
    assert (
        "CPU per turn: every peer >= 5x subagents: yes (nearest: autogen-agentchat, 6.0x)" in lines
    )
    slower = [*records, Record("peer_cpu", "pydantic-ai", 1000, "us/turn", 450.0, 450.0, 1)]
    assert "every peer >= 5x subagents: NO (nearest: pydantic-ai, 4.5x)" in table(slower)
    assert peers_table([Record("spawn_exit", "subagents", 10, "s", 0.1, 0.1, 1)]) == []


def test_the_jobs_table_gives_the_job_state_overhead_against_its_target() -> None:
    records = [
        Record("jobs_overhead", "subagents", 1000, "s", 1.05, 1.1, 3),
        Record("jobs_overhead", "direct", 1000, "s", 1.0, 1.0, 3),
        Record("jobs_local_10000", "local", 10000, "x ideal", 1.8, 1.9, 3),
    ]
    text = table(records)
    assert "| jobs_overhead | 1,000 | 952 rows/s | 1,000 rows/s | +5.0% | < 10%: yes |" in text
    assert "| jobs_local_10000 | 10,000 | 1.80x ideal |" in text
    slow = [Record("jobs_overhead", "subagents", 1000, "s", 1.2, 1.2, 1), records[1]]
    assert "< 10%: NO" in table(slow)


def test_the_cpu_ratio_is_also_given_repetition_by_repetition() -> None:
    """On a loaded machine the two minimums may come from different minutes; each
    repetition's two measurements, taken back to back, give a steadier ratio."""
    from subagents.cli._bench.run import paired_note

    note = paired_note("runtime_turns_cpu", [60.0, 90.0, 45.0], [30.0, 30.0, 20.0])
    assert note == (
        "runtime_turns_cpu, paired: open_runtime / kernel in each repetition (back to back), "
        "median 2.25x, from 2.00x to 3.00x over 3"
    )
    assert paired_note("x", [], []) == "x, paired: no repetition to pair"


def test_an_agents_cpu_is_split_into_once_and_each_turn_by_two_lengths() -> None:
    """Agents of 2 turns cost 100 us each and agents of 10 turns 260 us: 20 us a turn,
    and the 60 us an agent costs whatever its length (spawn, file, result)."""
    from subagents.cli._bench.run import split_agent

    assert split_agent(100.0, 260.0, (2, 10)) == (60.0, 20.0)
    once, turn = split_agent(50.0, 50.0, (1, 20))  # no cost a turn: all of it once
    assert (once, turn) == (50.0, 0.0)
    with pytest.raises(ValueError, match="longer"):
        split_agent(1.0, 2.0, (10, 2))


@pytest.mark.parametrize("path", ["kernel", "open_runtime"])
async def test_a_workload_marks_its_measured_interval_for_a_sampler(
    tmp_path: Path, path: str
) -> None:
    """``window`` opens after the runtime is open and closes once every agent is final, with
    the CPU interval it brackets (``bench_samples.py`` samples only inside it)."""
    folder = find_bench_dir()
    assert folder is not None
    agents = load_scenarios(folder)["bench_agents"]
    marks: list[tuple[bool, int]] = []
    cpu: list[float] = []

    def window(on: bool) -> None:
        marks.append((on, len(cpu)))

    if path == "kernel":
        await agents.run_agents(3, 0.0, turns=2, cpu=cpu, window=window)
    else:
        await agents.run_runtime_agents(
            3, transcripts=True, root=tmp_path, turns=2, cpu=cpu, window=window
        )
    # Opened before the CPU interval began, closed after it was taken: once each.
    assert marks == [(True, 0), (False, 1)]
