"""``subagents demo``: the actor kernel surveying a directory, with its events shown live.

A lead actor fans out one worker per top-level folder, never more than
``max_threads`` at once (the rest wait for a slot), and gathers their reports
from the completion notices in its mailbox. Each worker walks its folder and
counts files, lines and bytes by extension. Every spawn and status change is
printed as it is published on the bus, so the supervision is visible. Folder
and file names are shown by :func:`~subagents._visible.visible`: a name can
hold terminal controls.
"""

from __future__ import annotations

import collections
import json
import os
import sys
from pathlib import Path
from typing import Any, Final, TextIO

import trio

from subagents._visible import visible
from subagents.actors import (
    ActorContext,
    AgentLimitReached,
    AgentSpawned,
    Bus,
    ChildFinished,
    Completed,
    Lagged,
    StatusChanged,
    Subscription,
    SupervisorConfig,
    kind_of,
    open_supervisor,
)

__all__ = ["run_demo"]

_SKIP: Final = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__"}
    | {".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox"}
)
_MAX_FILE_BYTES: Final = 4 * 1024 * 1024  # larger files are counted by size only
_NO_EXTENSION: Final = "(none)"


def _walk(folder: Path) -> dict[str, Any]:
    """Count files, lines and bytes by extension below ``folder`` (blocking; run in a thread)."""
    files = lines = size = 0
    by_ext: collections.Counter[str] = collections.Counter()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP)
        for name in filenames:
            path = Path(dirpath, name)
            try:
                stat = path.lstat()
            except OSError:
                continue
            if not path.is_file() or path.is_symlink():
                continue
            files += 1
            size += stat.st_size
            by_ext[path.suffix.lower() or _NO_EXTENSION] += 1
            if stat.st_size <= _MAX_FILE_BYTES:
                try:
                    with path.open("rb") as f:
                        lines += sum(
                            chunk.count(b"\n") for chunk in iter(lambda: f.read(65536), b"")
                        )
                except OSError:
                    continue
    return {
        "files": files,
        "lines": lines,
        "bytes": size,
        "extensions": dict(by_ext.most_common(3)),
    }


def _folders(root: Path) -> list[Path]:
    """The top-level folders of ``root`` worth surveying (blocking; run in a thread)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name not in _SKIP)


def _worker(folder: Path) -> Any:
    async def survey(ctx: ActorContext) -> str:
        report = await trio.to_thread.run_sync(_walk, folder, abandon_on_cancel=True)
        return json.dumps({"folder": folder.name, **report})

    return survey


def _lead(root: Path, timeout: float) -> Any:
    async def lead(ctx: ActorContext) -> str:
        folders = await trio.to_thread.run_sync(_folders, root)
        queue = collections.deque(folders)
        reports: list[dict[str, Any]] = []
        running = 0
        with trio.fail_after(timeout):
            while queue or running:
                while queue:
                    try:
                        await ctx.spawn(_worker(queue[0]), label=f"survey {queue[0].name}/")
                    except AgentLimitReached:
                        break  # every slot is taken: wait for a worker to finish
                    queue.popleft()
                    running += 1
                notice = await ctx.receive()
                if isinstance(notice, ChildFinished):
                    running -= 1
                    if isinstance(notice.status, Completed) and notice.status.result:
                        reports.append(json.loads(notice.status.result))
        return json.dumps(reports)

    return lead


async def _print_events(sub: Subscription, out: TextIO) -> None:
    async for event in sub:
        if isinstance(event, Lagged):
            print(f"  … {event.dropped} events not shown (the printer fell behind)", file=out)
        elif isinstance(event, AgentSpawned):
            indent = "  " * event.depth
            print(f"{indent}+ {visible(event.nickname)} spawned: {visible(event.label)}", file=out)
        elif isinstance(event, StatusChanged) and kind_of(event.status) != "pending_init":
            indent = "  " * event.depth
            print(f"{indent}  {visible(event.nickname)}: {kind_of(event.status)}", file=out)


def _table(reports: list[dict[str, Any]]) -> str:
    rows = sorted(reports, key=lambda r: -r["lines"])
    names = [visible(r["folder"]) for r in rows]
    width = max([len(name) for name in names] + [6])
    lines = [f"{'folder':<{width}}  {'files':>7}  {'lines':>9}  {'KiB':>9}  top extensions"]
    for name, r in zip(names, rows, strict=True):
        exts = visible(", ".join(f"{e} {n}" for e, n in r["extensions"].items()))
        lines.append(
            f"{name + '/':<{width}}  {r['files']:>7,}  {r['lines']:>9,}  "
            f"{r['bytes'] / 1024:>9,.1f}  {exts}"
        )
    total_files = sum(r["files"] for r in rows)
    total_lines = sum(r["lines"] for r in rows)
    lines.append(f"{'total':<{width}}  {total_files:>7,}  {total_lines:>9,}")
    return "\n".join(lines)


async def _demo(root: Path, max_threads: int, timeout: float, out: TextIO) -> int:
    bus = Bus()
    config = SupervisorConfig(max_threads=max_threads, max_depth=1)
    with bus.subscribe(capacity=256) as sub:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_print_events, sub, out)
            async with open_supervisor(config, bus=bus) as sup:
                print(
                    f"surveying {visible(str(root))} with at most {max_threads} agents at once",
                    file=out,
                )
                lead = await sup.spawn(_lead(root, timeout), label=f"lead over {root.name}/")
                result = await sup.wait([lead.id], timeout=timeout + 1)
                await sup.close(lead.id)
            stats = sup.statistics()
            sub.close()  # the printer shows what is still buffered, then ends
    status = result.statuses[lead.id]
    if not isinstance(status, Completed) or status.result is None:
        print(f"the lead did not complete: {visible(str(status))}", file=sys.stderr)
        return 1
    print(file=out)
    print(_table(json.loads(status.result)), file=out)
    print(
        f"\n{stats.spawned} agents, at most {stats.peak_live} at once "
        f"(max_threads={max_threads}); {bus.statistics().published} events published",
        file=out,
    )
    return 0


def run_demo(root: Path, *, max_threads: int = 4, timeout: float = 120.0, out: TextIO) -> int:
    """Survey ``root`` with kernel actors, printing their events; return an exit code."""
    return trio.run(_demo, root.resolve(), max_threads, timeout, out)
