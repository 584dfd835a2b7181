"""The ``subagents transcripts list|show|prune`` commands.

Every agent's transcript is a JSON-lines file under
``<state_dir>/sessions/<session>/subagents/agent-<id>.jsonl``. ``list`` shows
them all, newest first; ``show ID`` one of them, readably: who the agent is,
each message (tool calls and results shortened), the result of each run, and
any line the loader left out or repaired. ``--json`` prints the same for
programs. ``prune`` removes old transcripts now (``--dry-run``: says what would
go), with the rules the runtime applies when it closes. Everything a transcript
holds is untrusted (model text, tool arguments and results, names): it is shown
by :func:`~subagents._visible.visible`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

import msgspec

from subagents._exceptions import SubagentsError
from subagents._visible import json_safe, visible
from subagents.cli._formatting import format_duration, format_tokens, plural
from subagents.runtime import (
    MessageRecord,
    MetaRecord,
    PrunedSession,
    RedactedThinkingBlock,
    ResultRecord,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Transcript,
    TranscriptInfo,
    TranscriptNotFound,
    TranscriptProblem,
    WebFetchToolResultBlock,
    WebSearchToolResultBlock,
    clean_old_transcripts,
    find_transcript,
    list_transcripts,
    load_config,
    load_transcript,
)

__all__ = ["add_transcripts_commands", "count_messages", "not_found_message"]

#: How much of a tool call's input, and of a tool result, ``show`` prints.
INPUT_WIDTH: Final = 160
RESULT_WIDTH: Final = 240
#: The marker of a message line: the encoder writes the tag first, and inside a JSON
#: string a quote is always escaped, so this text only ever starts a message record.
_MESSAGE_TAG: Final = b'{"record":"message"'
_CHUNK: Final = 1 << 16


def add_transcripts_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Register ``transcripts`` (with ``list`` and ``show``) on the command's subparsers."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="the state directory the agents ran with (default: the configured one, "
        "~/.subagents/state unless a config file or SUBAGENTS_STATE_DIR says otherwise)",
    )
    common.add_argument("--json", action="store_true", help="print JSON for programs")

    transcripts = commands.add_parser(
        "transcripts",
        help="list the agents' transcripts, or show one",
        description=__doc__.split("\n\n")[1],
        epilog=(
            "examples:\n"
            "  subagents transcripts list\n"
            "  subagents transcripts show 2f523ae1-1\n"
            "  subagents transcripts list --state-dir ./state --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = transcripts.add_subparsers(dest="transcripts_command", metavar="COMMAND", required=True)

    listing = sub.add_parser(
        "list",
        parents=[common],
        help="every transcript, newest first",
        description=(
            "Every transcript under the state directory, the most recently modified first:\n"
            "its session, the agent's id, type and nickname, how many messages it holds,\n"
            "its size, when it was last written and how its last run ended."
        ),
        epilog=(
            "examples:\n"
            "  subagents transcripts list\n"
            "  subagents transcripts list --state-dir ./state\n"
            "  subagents transcripts list --json | jq -r '.[].agent_id'"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.set_defaults(func=_cmd_list)

    show = sub.add_parser(
        "show",
        parents=[common],
        help="one agent's transcript: who it is, its messages, its results",
        description=(
            "One agent's transcript, readably: its metadata, each message (role, origin,\n"
            "text; tool calls and tool results shortened), the result of each run, and the\n"
            "lines the loader left out or repaired, with their line numbers."
        ),
        epilog=(
            "examples:\n"
            "  subagents transcripts show 2f523ae1-1\n"
            "  subagents transcripts show 2f523ae1-1 --state-dir ./state | less\n"
            "  subagents transcripts show 2f523ae1-1 --json > agent.json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("agent_id", metavar="ID", help="the agent's id (see transcripts list)")
    show.set_defaults(func=_cmd_show)

    prune = sub.add_parser(
        "prune",
        parents=[common],
        help="remove old transcripts now (--dry-run: list what would go)",
        description=(
            "Remove the transcripts of sessions last written more than --older-than days\n"
            "ago (default: transcripts.retention_days), as a runtime does when it closes.\n"
            "Only what subagents wrote goes: folders named like a session id holding\n"
            "agent-<id>.jsonl transcripts with their meta record. Other files and folders,\n"
            "links, and sessions with an agent running (a locked transcript) are left."
        ),
        epilog=(
            "examples:\n"
            "  subagents transcripts prune --dry-run\n"
            "  subagents transcripts prune --older-than 7\n"
            "  subagents transcripts prune --state-dir ./state --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    prune.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="remove sessions last written more than DAYS ago (default: the retention)",
    )
    prune.add_argument("--dry-run", action="store_true", help="remove nothing; list what would go")
    prune.set_defaults(func=_cmd_prune)


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = float("nan")
    if not 0 < days < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of days, got {text!r}")
    return days


def not_found_message(agent_id: str, state_dir: Path) -> str:
    """The one line said for an agent id without a transcript."""
    return (
        f"no transcript for agent {agent_id!r} under {state_dir}; "
        "run `subagents transcripts list` to see them"
    )


def _fail(command: str, message: str, code: int = 1) -> int:
    print(f"subagents transcripts {command}: {visible(message)}", file=sys.stderr)
    return code


def _state_dir(args: argparse.Namespace) -> Path:
    """``--state-dir``, else the configured state directory (raises ``ConfigError``)."""
    if args.state_dir is not None:
        return Path(args.state_dir).expanduser().resolve()
    return load_config(cwd=Path.cwd(), env=os.environ).state_dir


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"


def count_messages(path: Path) -> int | None:
    """How many message lines the file holds (``None`` if it cannot be read)."""
    count = 0
    carry = b""
    try:
        with path.open("rb") as file:
            while chunk := file.read(_CHUNK):
                data = carry + chunk
                count += data.count(_MESSAGE_TAG)
                carry = data[-(len(_MESSAGE_TAG) - 1) :]  # too short to hold a whole tag
    except OSError:
        return None
    return count


def _last(result: ResultRecord | None) -> str:
    if result is None:
        return "-"
    reason = result.terminate_reason.value
    return result.status if reason in ("goal", "aborted") else f"{result.status} ({reason})"


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    rows = [[visible(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        print("  ".join([*cells, row[-1]]).rstrip(), file=out)


def _info_record(info: TranscriptInfo, messages: int | None) -> dict[str, Any]:
    last = info.last_result
    return {
        "session_id": info.session_id,
        "agent_id": info.agent_id,
        "agent_type": info.agent_type,
        "nickname": info.nickname,
        "messages": messages,
        "size": info.size,
        "modified": info.modified,
        "path": str(info.path),
        "last_result": None
        if last is None
        else {
            "run": last.run,
            "status": last.status,
            "terminate_reason": last.terminate_reason.value,
        },
        "problem": info.problem,
    }


def _cmd_list(args: argparse.Namespace) -> int:
    try:
        state_dir = _state_dir(args)
    except SubagentsError as exc:
        return _fail("list", " ".join(str(exc).split()))
    infos = list_transcripts(state_dir)
    counts = [count_messages(info.path) for info in infos]
    out = sys.stdout
    if args.json:
        records = [_info_record(info, n) for info, n in zip(infos, counts, strict=True)]
        out.write(json_safe(json.dumps(records, indent=2, ensure_ascii=False)) + "\n")
        return 0
    if not infos:
        print(f"No transcripts under {visible(str(state_dir))}.", file=out)
        return 0
    rows: list[list[str]] = [
        ["SESSION", "AGENT ID", "TYPE", "NICKNAME", "MSGS", "SIZE", "MODIFIED", "LAST RESULT"]
    ]
    for info, n in zip(infos, counts, strict=True):
        rows.append(
            [
                info.session_id,
                info.agent_id,
                info.agent_type or "?",
                info.nickname or "?",
                "?" if n is None else str(n),
                _size(info.size),
                _when(info.modified),
                _last(info.last_result) if info.problem is None else f"? ({info.problem})",
            ]
        )
    _table(rows, out)
    sessions = len({info.session_id for info in infos})
    print(
        f"\n{plural(len(infos), 'transcript')} in {plural(sessions, 'session')} under "
        f"{visible(str(state_dir))}. `subagents transcripts show ID` shows one; "
        "`subagents resume ID` brings the agent back.",
        file=out,
    )
    return 0


# -- show --------------------------------------------------------------------------------


def _short(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with a note of what was left out."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    return f"{flat[: width - 1]}… [{len(flat) - width + 1} more characters]"


def _input(arguments: Mapping[str, Any]) -> str:
    return _short(json.dumps(arguments, ensure_ascii=False, sort_keys=True), INPUT_WIDTH)


def _indented(text: str, prefix: str = "    ") -> list[str]:
    # Split at newlines only: a carriage return or another separator is shown, not obeyed.
    lines = text.removesuffix("\n").split("\n") if text else []
    return [f"{prefix}{line}".rstrip(" ") for line in lines] or [prefix.rstrip()]


def _meta_lines(transcript: Transcript) -> list[str]:
    meta: MetaRecord = transcript.meta
    source = meta.definition_source or "?"
    if meta.definition_path:
        source += f" ({meta.definition_path})"
    fields: list[tuple[str, object]] = [
        ("type", meta.agent_type),
        ("nickname", meta.nickname),
        ("session", meta.session_id or "?"),
        ("parent", meta.parent_id or "(none: a top-level agent)"),
        ("depth", meta.depth),
        ("model", meta.model or "?"),
        ("definition", source),
        ("created", _when(meta.created)),
        ("file", transcript.path),
    ]
    resumed = len(transcript.metas) - 1
    if resumed:
        fields.append(("resumed", f"{resumed} time{'s' if resumed > 1 else ''}"))
    lines = [f"Agent {meta.agent_id}"]
    lines.extend(f"  {label + ':':<12} {value}" for label, value in fields)
    return lines


def _message_lines(records: Iterable[MessageRecord]) -> list[str]:
    names: dict[str, str] = {}
    lines: list[str] = []
    for record in records:
        message = record.message
        origin = f" ({message.origin.value})" if message.origin is not None else ""
        lines.append(f"#{record.seq} {message.role}{origin}  {_when(record.time)}")
        for block in message.content:
            if type(block) is TextBlock:
                lines.extend(_indented(block.text))
            elif type(block) is ToolUseBlock:
                names[block.id] = block.name
                lines.append(f"    -> {block.name} {_input(block.input)}")
            elif type(block) is ToolResultBlock:
                name = names.get(block.tool_use_id, block.tool_use_id)
                error = " ERROR" if block.is_error else ""
                size = f"({plural(len(block.content.splitlines()), 'line')})"
                text = _short(block.content, RESULT_WIDTH)
                lines.append(f"    <- {name}{error} {size}: {text}")
            elif type(block) is ThinkingBlock:
                lines.append(f"    (thinking, {len(block.thinking)} characters)")
            elif type(block) is RedactedThinkingBlock:
                lines.append("    (redacted thinking)")
            elif type(block) is ServerToolUseBlock:
                names[block.id] = block.name
                lines.append(f"    -> {block.name} (run by the provider) {_input(block.input)}")
            elif isinstance(block, WebSearchToolResultBlock | WebFetchToolResultBlock):
                name = names.get(block.tool_use_id, block.tool_use_id)
                found = block.content
                failed = isinstance(found, dict) and str(found.get("type", "")).endswith("_error")
                what = f"{len(found)} results" if isinstance(found, list) else "1 result"
                lines.append(f"    <- {name}{' ERROR' if failed else ''} ({what})")
    return lines


def _result_lines(results: Sequence[ResultRecord]) -> list[str]:
    lines: list[str] = []
    for result in results:
        counters = (
            f"{plural(result.turns, 'turn')}, {plural(result.tool_uses, 'tool use')}, "
            f"{format_tokens(result.usage.total_tokens)} tokens, "
            f"{format_duration(result.duration)}"
        )
        grace = f", grace turn after {result.grace.replace('_', ' ')}" if result.grace else ""
        lines.append(
            f"run {result.run}: {result.status} ({result.terminate_reason.value}), "
            f"{counters}{grace}  {_when(result.time)}"
        )
        if result.error:
            lines.append(f"    error: {result.error}")
        if result.output is not None:
            lines.extend(_indented(json.dumps(result.output, indent=2, ensure_ascii=False)))
        elif result.text:
            lines.extend(_indented(result.text))
    return lines


def _problem_lines(problems: Sequence[TranscriptProblem]) -> list[str]:
    return [f"  line {p.line}: {p.message}" for p in problems]


def _transcript_record(transcript: Transcript) -> dict[str, Any]:
    def problems(items: Sequence[TranscriptProblem]) -> list[dict[str, Any]]:
        return [{"line": p.line, "message": p.message} for p in items]

    return {
        "path": str(transcript.path),
        "meta": msgspec.to_builtins(transcript.meta),
        "metas": msgspec.to_builtins(transcript.metas),
        "messages": msgspec.to_builtins(transcript.messages),
        "results": msgspec.to_builtins(transcript.results),
        "problems": problems(transcript.problems),
        "notes": problems(transcript.notes),
    }


def _cmd_show(args: argparse.Namespace) -> int:
    agent_id: str = args.agent_id
    try:
        transcript = load_transcript(find_transcript(_state_dir(args), agent_id))
    except TranscriptNotFound as exc:
        return _fail("show", not_found_message(agent_id, exc.where))
    except SubagentsError as exc:
        return _fail("show", " ".join(str(exc).split()))
    except OSError as exc:
        return _fail("show", f"could not read the transcript: {exc.strerror or exc}")
    out = sys.stdout
    if args.json:
        out.write(
            json_safe(json.dumps(_transcript_record(transcript), indent=2, ensure_ascii=False))
        )
        out.write("\n")
        return 0
    lines = _meta_lines(transcript)
    lines += ["", f"Messages ({len(transcript.messages)})"]
    lines += _message_lines(transcript.messages)
    lines += ["", f"Results ({len(transcript.results)})"]
    lines += _result_lines(transcript.results) or ["  (no run has finished)"]
    if transcript.problems:
        lines += ["", f"Problems ({len(transcript.problems)})"]
        lines += _problem_lines(transcript.problems)
    if transcript.notes:
        lines += ["", f"Notes ({len(transcript.notes)})"]
        lines += _problem_lines(transcript.notes)
    # Every line is one line: shown with its controls as signs (tabs kept).
    out.write("\n".join(visible(line, newlines=True) for line in lines) + "\n")
    return 0


# -- prune -------------------------------------------------------------------------------


def _pruned_record(item: PrunedSession) -> dict[str, Any]:
    return {
        "session_id": item.session_id,
        "path": str(item.path),
        "newest": item.newest,
        "transcripts": [str(p) for p in item.transcripts],
        "left": [str(p) for p in item.left],
        "skipped": item.skipped,
        "folder_removed": item.folder_removed,
    }


def _cmd_prune(args: argparse.Namespace) -> int:
    try:
        state_dir = _state_dir(args)
        days = args.older_than
        if days is None:
            days = load_config(cwd=Path.cwd(), env=os.environ).transcripts.retention_days
        found = clean_old_transcripts(state_dir, days, dry_run=args.dry_run)
    except SubagentsError as exc:
        return _fail("prune", " ".join(str(exc).split()))
    out = sys.stdout
    if args.json:
        records = [_pruned_record(item) for item in found]
        payload = {"dry_run": args.dry_run, "older_than_days": days, "sessions": records}
        out.write(json_safe(json.dumps(payload, indent=2, ensure_ascii=False)) + "\n")
        return 0
    gone = [item for item in found if item.skipped is None]
    count = sum(len(item.transcripts) for item in gone)
    verb = "Would remove" if args.dry_run else "Removed"
    print(
        f"{verb} {plural(count, 'transcript')} in {plural(len(gone), 'session')} last written "
        f"more than {days:g} days ago under {visible(str(state_dir))}.",
        file=out,
    )
    for item in found:
        when = _when(item.newest)
        if item.skipped is not None:
            print(f"  kept {item.session_id}  (last written {when}): {item.skipped}", file=out)
            continue
        folder = "the folder" if item.folder_removed else "not the folder"
        print(
            f"  {item.session_id}  {plural(len(item.transcripts), 'transcript')}, {folder}  "
            f"(last written {when})",
            file=out,
        )
        for path in item.left:
            print(f"    left (not written by subagents): {visible(str(path))}", file=out)
    return 0
