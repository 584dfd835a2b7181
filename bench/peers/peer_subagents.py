"""The peer workload on ``subagents``, through the path a user takes.

``open_runtime(tools=[add])`` with ``add`` a ``@subagents.tool`` function, one
agent type from a project folder (``tools: add``), and ``rt.spawn`` per agent;
the model is the runtime's own offline :class:`~subagents.runtime.ScriptedProvider`
playing :func:`subagents.testing.tool_loop` (``add`` for ``TURNS`` turns, then
the final text), with ``latency`` seconds per call (its waits go through the
provider's shared timer). Transcripts are off unless ``--transcripts``; the
JSON log keeps its defaults. The agents run at once in the runtime's nursery;
the run ends when ``rt.wait(mode="all")`` returns.

    python bench/peers/peer_subagents.py --agents 100 --latency 0.1
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import trio

import subagents
from subagents import testing
from subagents.runtime import (
    LimitsConfig,
    RuntimeConfig,
    ScriptedProvider,
    TerminateReason,
    TranscriptsConfig,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import FINAL, TURNS, check, main

#: Seconds the runtime gives each agent and the wait for all of them.
TIMEOUT = 600.0


class Counter:
    """How many times ``add`` ran (the proof of the workload)."""

    calls = 0


@subagents.tool(read_only=True)
async def add(a: int, b: int) -> int:
    """Add two integers."""
    Counter.calls += 1
    return a + b


async def run_agents(agents: int, latency: float, *, transcripts: bool, root: Path) -> int:
    """Run the workload under ``root``; the number of ``add`` calls made."""
    project, home, state = root / "project", root / "home", root / "state"
    agents_dir = project / ".claude" / "agents"
    agents_dir.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    (project / ".git").mkdir(exist_ok=True)
    (agents_dir / "adder.md").write_text(
        "---\nname: adder\ndescription: Adds numbers with the add tool.\n"
        "tools: add\n---\n\nYou add numbers.\n"
    )
    config = RuntimeConfig(
        state_dir=state,
        limits=LimitsConfig(max_threads=agents, max_time_seconds=TIMEOUT),
        transcripts=TranscriptsConfig(enabled=transcripts),
    )
    provider = ScriptedProvider(
        testing.tool_loop("add", {"a": 1, "b": 2}, turns=TURNS, final=FINAL), latency=latency
    )
    Counter.calls = 0
    async with subagents.open_runtime(
        config,
        cwd=project,
        home=home,
        env={},
        provider=provider,
        tools=[add],
        trust_project=True,
    ) as rt:
        ids = [(await rt.spawn("adder", "Add 1 and 2.")).agent_id for _ in range(agents)]
        await rt.wait(ids, timeout=TIMEOUT, mode="all")
        results = [rt.result(agent_id) for agent_id in ids]
    outputs = [
        r.text if r is not None and r.terminate_reason is TerminateReason.GOAL else repr(r)
        for r in results
    ]
    return check(outputs, Counter.calls, agents)


def runner(
    transcripts: bool, folders: list[tempfile.TemporaryDirectory[str]]
) -> Callable[[int, float], int]:
    """``run(agents, latency)`` for the harness, each in a fresh ``trio.run`` and state folder.

    The folders are kept in ``folders`` and deleted once the measurement is printed: no
    peer writes files, so deleting ours (a thousand transcripts) is no part of the
    workload, and on a file system slow to make files right after a mass deletion the
    warm-up's would slow the measured run's files too.
    """

    def run(agents: int, latency: float) -> int:
        folder = tempfile.TemporaryDirectory(prefix="subagents-peer-")
        folders.append(folder)
        root = Path(folder.name)
        return int(
            trio.run(lambda: run_agents(agents, latency, transcripts=transcripts, root=root))
        )

    return run


def _main(argv: list[str]) -> int:
    on = "--transcripts" in argv
    folders: list[tempfile.TemporaryDirectory[str]] = []
    try:
        return main(runner(on, folders), [a for a in argv if a != "--transcripts"])
    finally:
        for folder in folders:
            folder.cleanup()


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
