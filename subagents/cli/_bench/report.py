"""What ``subagents bench`` shows of its records: a Markdown table against the targets, a chart.

The targets are the kernel issue's: how far ``subagents`` may be from raw Trio,
how much faster than autogen-core it must be, how close to ideal many agents
must run, and how fast the definitions corpus must load; and issue 17's for the
peers (every agent framework spends at least 5x our CPU per turn). The chart needs
matplotlib (``pip install 'subagents[bench]'``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from subagents.cli._bench.scenarios import PEER_SCENARIOS, Record
from subagents.runtime import CollectorConfig

__all__ = [
    "draw_chart",
    "jobs_ray_table",
    "matplotlib_missing",
    "peers_table",
    "runtime_table",
    "table",
]

#: subagents / raw Trio must not exceed these (the kernel issue's targets).
TRIO_TARGETS: Final = {
    "spawn_exit": 2.0,
    "request_reply": 1.25,
    "fan_out": 2.0,
    "pubsub": 2.0,
    "tree_cancel": 1.5,
    "idle_memory": 1.5,
}
#: autogen / subagents (the speed-up) must reach these.
AUTOGEN_TARGETS: Final = {"request_reply": 8.0, "fan_out": 15.0}
#: Elapsed / ideal must not exceed these (efficiency_100 has no target of its own).
EFFICIENCY_TARGETS: Final = {"efficiency_1000": 1.25, "efficiency_10000": 1.5}
CORPUS_TARGET: Final = 1.0
#: open_runtime (transcripts on) / the kernel-agent path, CPU per turn, must not exceed this.
RUNTIME_KERNEL_TARGET: Final = 2.0
#: runtime_efficiency_1000 must not exceed this (elapsed / ideal).
RUNTIME_EFFICIENCY_TARGET: Final = 1.25
#: runtime_efficiency_10000 must not exceed this times the kernel path's figure, same run.
RUNTIME_10000_VS_KERNEL: Final = 1.5
#: Every peer framework's CPU per turn / subagents' must reach this (zero latency).
PEER_CPU_TARGET: Final = 5.0
#: jobs_overhead: run_job's time / the same rows run directly, minus 1, must stay under this.
JOBS_OVERHEAD_TARGET: Final = 0.10
#: jobs_ray_10000: local / Ray (2 workers) elapsed must reach this (issue 19).
RAY_SPEEDUP_TARGET: Final = 1.5
#: jobs_ray_10000: Ray (2 workers) with its workers' collector policy, elapsed / ideal.
RAY_EFFICIENCY_TARGET: Final = 1.5


def _figure(r: Record) -> str:
    if r.unit == "s":
        return f"{r.min:.3f} s"
    if r.unit in ("us/turn", "us/agent"):
        return f"{r.min:.1f} us"
    if r.unit == "bytes/actor":
        return f"{r.min / 1024:.2f} KiB"
    return f"{r.min:.2f}x"


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


def table(records: Sequence[Record]) -> str:
    """A Markdown table: min per implementation, ratios, and whether each target is met."""
    by = {(r.scenario, r.impl): r for r in records}
    lines = [
        "| scenario | n | subagents | raw Trio | vs Trio | asyncio | autogen "
        "| autogen / subagents | targets met |",
        "|---|---:|---:|---:|---:|---:|---:|---:|:-:|",
    ]
    for scenario in dict.fromkeys(r.scenario for r in records):
        ours = by.get((scenario, "subagents"))
        if ours is None or scenario.startswith(("runtime_", "jobs_")) or scenario in PEER_SCENARIOS:
            continue
        raw, aio, ag = (by.get((scenario, impl)) for impl in ("trio", "asyncio", "autogen"))
        checks: list[str] = []
        vs_trio = vs_autogen = ""
        if raw is not None:
            ratio = ours.min / raw.min if raw.min else float("inf")
            vs_trio = f"{ratio:.2f}x"
            if scenario in TRIO_TARGETS:
                target = TRIO_TARGETS[scenario]
                checks.append(f"Trio <= {target:g}x: {_met(ratio <= target)}")
        if ag is not None:
            speedup = ag.min / ours.min if ours.min else float("inf")
            vs_autogen = f"{speedup:.1f}x"
            if scenario in AUTOGEN_TARGETS:
                target = AUTOGEN_TARGETS[scenario]
                checks.append(f"autogen >= {target:g}x: {_met(speedup >= target)}")
        if scenario in EFFICIENCY_TARGETS:
            target = EFFICIENCY_TARGETS[scenario]
            checks.append(f"<= {target:g}x ideal: {_met(ours.min <= target)}")
        if scenario == "corpus_load":
            checks.append(f"< {CORPUS_TARGET:g} s: {_met(ours.min < CORPUS_TARGET)}")
        n = f"{ours.n:,}"
        if scenario in ("agent_turns", "transcripts_on", "transcripts_off"):
            n += f" turns ({ours.n / ours.min:,.0f}/s)"
        elif scenario == "function_tool_call":
            n += f" calls ({ours.n / ours.min:,.0f}/s)" if ours.min else " calls"
        elif scenario == "mcp_call":
            n += f" round trips ({ours.n / ours.min:,.0f}/s)" if ours.min else " round trips"
        elif scenario == "board_claims":
            n += f" claims ({ours.n / ours.min:,.0f}/s)" if ours.min else " claims"
        elif scenario == "team_messages":
            n += f" messages ({ours.n / ours.min:,.0f}/s)" if ours.min else " messages"
        lines.append(
            f"| {scenario} | {n} | {_figure(ours)} | {_figure(raw) if raw else ''} | {vs_trio} "
            f"| {_figure(aio) if aio else ''} | {_figure(ag) if ag else ''} | {vs_autogen} "
            f"| {'; '.join(checks)} |"
        )
    on, off = by.get(("transcripts_on", "subagents")), by.get(("transcripts_off", "subagents"))
    if on is not None and off is not None:
        lines.append("")
        lines.append(
            f"Transcripts on cost {on.min / off.min:.2f}x the time of transcripts off "
            f"({on.n / on.min:,.0f} against {off.n / off.min:,.0f} turns/s)."
        )
    lines.extend(peers_table(records))
    lines.extend(jobs_table(records))
    runtime = runtime_table(records)
    if runtime:
        lines += ["", runtime]
    collector = collector_table(records)
    if collector:
        lines += ["", collector]
    lines.extend(jobs_ray_table(records))
    return "\n".join(lines)


def collector_table(records: Sequence[Record]) -> str:
    """``collector_10000``: elapsed / ideal under each ``[collector]`` policy, on both paths.

    Empty when the scenario did not run.
    """
    by = {r.impl: r for r in records if r.scenario == "collector_10000"}
    if not by:
        return ""
    lines = [
        "| collector_10000 | n | kernel agents | open_runtime | open_runtime vs default |",
        "|---|---:|---:|---:|---:|",
    ]
    base = by.get("subagents")
    for policy, suffix in (("default", ""), ("relaxed", "+relaxed"), ("freeze", "+freeze")):
        kernel, ours = by.get(f"kernel{suffix}"), by.get(f"subagents{suffix}")
        if ours is None:
            continue
        gain = f"{base.min / ours.min:.2f}x faster" if base and ours.min and suffix else ""
        lines.append(
            f"| {policy} | {ours.n:,} agents | {_figure(kernel) if kernel else ''} "
            f"| {_figure(ours)} | {gain} |"
        )
    return "\n".join(lines)


def _turns(r: Record | None) -> str:
    if r is None:
        return ""
    if r.scenario == "runtime_turns":
        return f"{_figure(r)} ({r.n / r.min:,.0f}/s)" if r.min else _figure(r)
    return _figure(r)


def runtime_table(records: Sequence[Record]) -> str:
    """The path users take (``open_runtime``) beside the kernel-agent path and raw Trio.

    Empty when no runtime_* scenario ran.
    """
    by = {(r.scenario, r.impl): r for r in records}
    scenarios = [s for s in dict.fromkeys(r.scenario for r in records) if s.startswith("runtime_")]
    if not scenarios:
        return ""
    lines = [
        "| open_runtime path | n | open_runtime | transcripts off | kernel agents | raw Trio "
        "| open_runtime / kernel | targets met |",
        "|---|---:|---:|---:|---:|---:|---:|:-:|",
    ]
    for scenario in scenarios:
        ours, off, kernel, raw = (
            by.get((scenario, impl)) for impl in ("subagents", "no_transcripts", "kernel", "trio")
        )
        if ours is None:
            continue
        ratio = ""
        checks: list[str] = []
        if kernel is not None and kernel.min:
            value = ours.min / kernel.min
            ratio = f"{value:.2f}x"
            if scenario in ("runtime_turns_cpu", "runtime_turns_cpu_all"):
                checks.append(
                    f"<= {RUNTIME_KERNEL_TARGET:g}x kernel: {_met(value <= RUNTIME_KERNEL_TARGET)}"
                )
            elif scenario == "runtime_efficiency_10000":
                checks.append(
                    f"<= {RUNTIME_10000_VS_KERNEL:g}x kernel: "
                    f"{_met(value <= RUNTIME_10000_VS_KERNEL)}"
                )
        if scenario == "runtime_efficiency_1000":
            checks.append(
                f"<= {RUNTIME_EFFICIENCY_TARGET:g}x ideal: "
                f"{_met(ours.min <= RUNTIME_EFFICIENCY_TARGET)}"
            )
        n = f"{ours.n:,}"
        if scenario.startswith(("runtime_turns", "runtime_turn_")):
            n += " turns"
        elif scenario == "runtime_agent_cpu" or scenario.startswith("runtime_efficiency"):
            n += " agents"
        lines.append(
            f"| {scenario} | {n} | {_turns(ours)} | {_turns(off)} | {_turns(kernel)} "
            f"| {_turns(raw)} | {ratio} | {'; '.join(checks)} |"
        )
    lines += [
        "",
        f"open_runtime with its default [collector] policy ({CollectorConfig().policy}); "
        "kernel agents with Python's collector settings, as open_supervisor leaves them "
        "(collector_10000 runs every policy on both paths).",
    ]
    return "\n".join(lines)


def _peer_cell(r: Record | None) -> str:
    if r is None:
        return ""
    if r.unit == "over s":
        return f"> {r.min:g} s"
    if r.unit == "bytes/agent":
        return f"{r.min / 1024:,.1f} KiB"
    if r.unit == "us/turn":
        return f"{r.min:,.0f} us"
    if r.unit == "s":
        return f"{r.n / r.min:,.0f}/s" if r.min else ""
    return f"{r.min:.2f}x"


def peers_table(records: Sequence[Record]) -> list[str]:
    """The peers: one row per implementation, and whether ours meets the CPU target.

    Empty when no peer scenario was recorded. CPU per turn and turns/s are at zero
    latency; efficiency is elapsed / ideal with 100 ms per model call.
    """
    peer = [r for r in records if r.scenario in PEER_SCENARIOS]
    if not peer:
        return []
    by = {(r.scenario, r.impl): r for r in peer}
    columns = [s for s in PEER_SCENARIOS if any(r.scenario == s for r in peer)]
    titles = {
        "peer_turns": "turns/s",
        "peer_cpu": "CPU per turn",
        "peer_memory": "per agent",
    }
    heads = [
        titles[c] if c in titles else f"efficiency {int(c.rsplit('_', 1)[1]):,}" for c in columns
    ]
    lines = [
        "",
        "Peers (same workload; zero latency for turns/s and CPU, 100 ms per model call "
        "for efficiency):",
        "",
        f"| framework | {' | '.join(heads)} |",
        f"|---|{'---:|' * len(columns)}",
    ]
    for impl in dict.fromkeys(r.impl for r in peer):
        cells = [_peer_cell(by.get((c, impl))) for c in columns]
        lines.append(f"| {impl} | {' | '.join(cells)} |")
    ours = by.get(("peer_cpu", "subagents"))
    others = [r for r in peer if r.scenario == "peer_cpu" and not r.impl.startswith("subagents")]
    if ours is not None and others and ours.min:
        nearest = min(others, key=lambda r: r.min)
        ratio = nearest.min / ours.min
        lines.append("")
        lines.append(
            f"CPU per turn: every peer >= {PEER_CPU_TARGET:g}x subagents: "
            f"{_met(ratio >= PEER_CPU_TARGET)} (nearest: {nearest.impl}, {ratio:.1f}x)"
        )
    return lines


def jobs_ray_table(records: Sequence[Record]) -> list[str]:
    """Agent jobs on Ray beside the local backend (issue 19), when they ran."""
    by = {(r.scenario, r.impl): r for r in records}
    local, ray = by.get(("jobs_ray_10000", "local")), by.get(("jobs_ray_10000", "ray"))
    overhead, local_overhead = (
        by.get(("jobs_overhead", "ray")),
        by.get(("jobs_overhead", "subagents")),
    )
    if local is None and ray is None and overhead is None:
        return []
    lines = [
        "",
        "| jobs on Ray | n | local | Ray | local / Ray | targets met |",
        "|---|---:|---:|---:|---:|:-:|",
    ]
    for impl, label in (("ray", ""), ("ray+freeze", ", workers' collector freeze")):
        remote = by.get(("jobs_ray_10000", impl))
        if local is None or remote is None:
            continue
        speedup = local.min / remote.min if remote.min else float("inf")
        target = (
            f">= {RAY_SPEEDUP_TARGET:g}x: {_met(speedup >= RAY_SPEEDUP_TARGET)}"
            if impl == "ray"
            else f"<= {RAY_EFFICIENCY_TARGET:g}x ideal: {_met(remote.min <= RAY_EFFICIENCY_TARGET)}"
        )
        lines.append(
            f"| jobs_ray_10000{label} | {remote.n:,} rows | {_figure(local)} ideal "
            f"| {_figure(remote)} ideal | {speedup:.2f}x | {target} |"
        )
    if overhead is not None and overhead.min:
        local_rate = ""
        ratio = ""
        if local_overhead is not None and local_overhead.min:
            local_rate = f"{local_overhead.n / local_overhead.min:,.0f} rows/s"
            ratio = f"{local_overhead.min / overhead.min:.2f}x"
        lines.append(
            f"| jobs_overhead | {overhead.n:,} rows, zero latency | {local_rate} "
            f"| {overhead.n / overhead.min:,.0f} rows/s | {ratio} | |"
        )
    return lines


def matplotlib_missing() -> bool:
    """Whether ``--chart`` cannot work here."""
    return importlib.util.find_spec("matplotlib") is None


def draw_chart(records: Sequence[Record], path: Path, *, ideal: float = 1.0) -> bool:
    """Wall time and efficiency against the number of agents; False when nothing to draw.

    ``ideal`` is the seconds an agent's turns take with no overhead (10 x 100 ms).
    """
    rows = sorted((r for r in records if r.scenario.startswith("efficiency_")), key=lambda r: r.n)
    if not rows:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (wall, eff) = plt.subplots(1, 2, figsize=(10, 4))
    for impl, label, style in (
        ("subagents", "subagents agents", "o-"),
        ("trio", "raw Trio tasks, same waits", "s--"),
    ):
        mine = [r for r in rows if r.impl == impl]
        agents = [r.n for r in mine]
        wall.plot(agents, [r.min * ideal for r in mine], style, label=label)
        eff.plot(agents, [r.min for r in mine], style, label=label)
    wall.axhline(ideal, color="grey", linewidth=0.8, label="ideal")
    wall.set(
        xscale="log",
        xlabel="agents at once",
        ylabel="seconds (min over repetitions)",
        title=f"Wall time of 10 turns each (ideal {ideal:g} s)",
    )
    eff.axhline(1.0, color="grey", linewidth=0.8, label="ideal")
    targets = sorted((int(k.rsplit("_", 1)[1]), v) for k, v in EFFICIENCY_TARGETS.items())
    eff.plot([a for a, _ in targets], [v for _, v in targets], "rx", label="target")
    eff.set(xscale="log", xlabel="agents at once", ylabel="elapsed / ideal", title="Efficiency")
    for axes in (wall, eff):
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def jobs_table(records: Sequence[Record]) -> list[str]:
    """Agent jobs on the local backend: rows/s with and without the job state, and
    10,000 rows at once against the ideal. Empty when no jobs scenario ran."""
    by = {(r.scenario, r.impl): r for r in records}
    lines: list[str] = []
    job, direct = by.get(("jobs_overhead", "subagents")), by.get(("jobs_overhead", "direct"))
    if job is not None and direct is not None and job.min and direct.min:
        overhead = job.min / direct.min - 1
        lines += [
            "",
            "| agent jobs | rows | run_job | directly | job state overhead | targets met |",
            "|---|---:|---:|---:|---:|:-:|",
            f"| jobs_overhead | {job.n:,} | {job.n / job.min:,.0f} rows/s "
            f"| {direct.n / direct.min:,.0f} rows/s | {overhead:+.1%} "
            f"| < {JOBS_OVERHEAD_TARGET:.0%}: {_met(overhead < JOBS_OVERHEAD_TARGET)} |",
        ]
    local = by.get(("jobs_local_10000", "local"))
    if local is not None:
        if not lines:
            lines += ["", "| agent jobs | rows | figure |", "|---|---:|---:|"]
            lines.append(f"| jobs_local_10000 | {local.n:,} | {local.min:.2f}x ideal |")
        else:
            lines.append(f"| jobs_local_10000 | {local.n:,} | {local.min:.2f}x ideal | | | |")
    return lines
