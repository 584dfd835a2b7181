"""The offline team's two policies: the lead that plans and waits, the teammate that works.

See :mod:`subagents.demo._team` for the story. Peer messages carry one line
each, in fixed formats the policies parse (and anything else is ignored)::

    figure `src`: markers=3 files=2             surveyor -> everyone
    correction `src`: markers=5 files=3 pattern=TODO|FIXME|XXX   checker -> surveyor
    revised `src`: markers=5 files=3            surveyor -> checker, lead
    agree `src`: markers=5 files=3              checker -> lead
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from subagents.demo._survey.common import (
    Exchange,
    calls_reply,
    exchanges,
    final_reply,
    is_instruction,
    jitter,
    message_text,
)
from subagents.demo._survey.results import parse_ls
from subagents.runtime import Message, ModelRequest, Reply, ReplyPolicy

__all__ = ["LEAD_TOOLS", "MATE_TOOLS", "TeamLeadPolicy", "TeammatePolicy", "team_policies"]

#: The tools each role uses (``subagents team`` grants them in its definitions).
LEAD_TOOLS: Final = ("LS", "TaskCreate", "TaskList", "TaskGet", "SendMessage")
MATE_TOOLS: Final = (
    "LS",
    "Glob",
    "Grep",
    "Read",
    "TaskList",
    "TaskGet",
    "TaskUpdate",
    "SendMessage",
)
#: The surveyor's quick pattern, and the checker's wider one (case-insensitive).
SURVEY_PATTERN: Final = "TODO"
CHECK_PATTERN: Final = "TODO|FIXME|XXX"
#: At most this many top-level folders are surveyed (the first ones by name).
MAX_FOLDERS: Final = 6
#: Corrections a checker sends for one folder before it reports its own figure.
MAX_CORRECTIONS: Final = 2
#: The teammate's agent type in ``team_policies``'s mapping (every other type leads).
MATE_TYPE: Final = "teammate"

_LINE = re.compile(
    r"^(figure|correction|revised|agree) `([^`\n]{1,200})`: markers=(\d+) files=(\d+)"
    r"(?: pattern=(\S{1,100}))?$",
    re.MULTILINE,
)
_PEER = re.compile(
    r'<teammate_message team="[^"]*" from="([^"]*)" agent_id="[^"]*">\n(.*?)\n</teammate_message>',
    re.DOTALL,
)
_ME = re.compile(r"\bYou are (\S+), a teammate in team\b")
_ROSTER = re.compile(r"^The team: ([A-Za-z0-9_.\- ,]+)\.$", re.MULTILINE)
_SUBJECT = re.compile(r"^(Survey|Check) `([^`\n]{1,200})`$")
_BOARD = re.compile(r"<task_board>\n(.*)\n</task_board>", re.DOTALL)
_COUNT = re.compile(r"^(.+):(\d+)$")
#: What the team's wake-up note says (:meth:`subagents.teams.Team.run_waker`).
_WAKE: Final = "can be claimed"


@attrs.frozen
class Said:
    """One line of a peer message: who sent it, where in the conversation, and what."""

    at: int
    sender: str
    kind: str
    folder: str
    markers: int
    files: int
    pattern: str | None = None


def peer_lines(messages: Sequence[Message]) -> list[Said]:
    """Every formatted line of every peer message in the conversation, in order."""
    said: list[Said] = []
    for index, message in enumerate(messages):
        if not is_instruction(message):
            continue
        for sender, body in _PEER.findall(message_text(message)):
            for kind, folder, markers, files, pattern in _LINE.findall(body):
                said.append(
                    Said(index, sender, kind, folder, int(markers), int(files), pattern or None)
                )
    return said


def board_data(content: str | None) -> Any:
    """The JSON of a task tool's ``<task_board>`` block (``None`` if there is none)."""
    if content is None:
        return None
    found = _BOARD.search(content)
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:
        return None


def grep_counts(content: str | None) -> tuple[int, int]:
    """A ``Grep`` count result as (matching lines, files with matches)."""
    markers = files = 0
    for line in (content or "").split("\n"):
        found = _COUNT.match(line)
        if found is not None:
            markers += int(found.group(2))
            files += 1
    return markers, files


def subject_of(kind: str, folder: str) -> str:
    """A task subject the policies can read back: ``Survey `src``` or ``Check `src```."""
    return f"{kind} `{folder}`"


def _line(kind: str, folder: str, markers: int, files: int, pattern: str | None = None) -> str:
    tail = f" pattern={pattern}" if pattern else ""
    return f"{kind} `{folder}`: markers={markers} files={files}{tail}"


def _grep(folder: str, pattern: str, insensitive: bool) -> tuple[str, dict[str, Any]]:
    return (
        "Grep",
        {
            "pattern": pattern,
            "path": folder,
            "output_mode": "count",
            "-i": insensitive,
            "head_limit": 100_000,
        },
    )


def _is_grep(ex: Exchange, folder: str, pattern: str, insensitive: bool) -> bool:
    return (
        ex.name == "Grep"
        and ex.input.get("path") == folder
        and ex.input.get("pattern") == pattern
        and bool(ex.input.get("-i")) is insensitive
        and ex.content is not None
    )


def _sent(ex: Exchange, prefix: str) -> bool:
    return ex.name == "SendMessage" and str(ex.input.get("message", "")).startswith(prefix)


@attrs.frozen
class _Claim:
    task_id: str
    kind: str
    folder: str
    at: int


@attrs.frozen
class TeammatePolicy:
    """A teammate: claims tasks, surveys or checks folders, corrects and revises figures."""

    latency: float = 0.0

    def __call__(self, request: ModelRequest) -> Reply:
        messages = request.messages
        calls = exchanges(messages)
        first = message_text(messages[0]) if messages else ""
        me_found = _ME.search(first)
        me = me_found.group(1) if me_found else "?"
        roster = _ROSTER.search(first)
        team = [n.strip() for n in roster.group(1).split(",")] if roster else [me]
        alone = len(team) <= 1
        said = peer_lines(messages)
        latency = jitter(self.latency, request)
        claims, done = self._claims(calls)
        surveyed = {c.folder for c in claims if c.kind == "Survey"}
        for step in (self._revise, self._survey, self._check):
            reply = step(calls, said, claims, done, surveyed, latency)
            if reply is not None:
                return reply
        if any(c.task_id not in done for c in claims):
            return final_reply(request, f"{me}: waiting for a peer's answer.", latency)
        reply = self._claim_next(messages, calls, surveyed, alone, latency, me, team)
        if reply is not None:
            return reply
        report = ", ".join(f"{c.kind.lower()}ed {c.folder}" for c in claims) or "no task"
        return final_reply(request, f"{me} is idle ({report}).", latency)

    # -- reading the conversation -----------------------------------------------------------

    @staticmethod
    def _claims(calls: Sequence[Exchange]) -> tuple[list[_Claim], set[str]]:
        claims: list[_Claim] = []
        done: set[str] = set()
        for ex in calls:
            if ex.name != "TaskUpdate" or ex.is_error or ex.content is None:
                continue
            task = (board_data(ex.content) or {}).get("task") or {}
            subject = _SUBJECT.match(str(task.get("subject", "")))
            if subject is None:
                continue
            status = ex.input.get("status")
            if status == "in_progress":
                claims.append(_Claim(str(task["id"]), subject.group(1), subject.group(2), ex.at))
            elif status == "completed":
                done.add(str(task["id"]))
        return claims, done

    # -- the obligations, most urgent first -------------------------------------------------

    @staticmethod
    def _revise(
        calls: Sequence[Exchange],
        said: Sequence[Said],
        claims: Sequence[_Claim],
        done: set[str],
        surveyed: set[str],
        latency: float,
    ) -> Reply | None:
        """A correction of a figure of mine: grep again with its pattern, then send the revision."""
        for line in said:
            if line.kind != "correction" or line.folder not in surveyed or not line.pattern:
                continue
            folder, pattern = line.folder, line.pattern
            if any(_sent(ex, f"revised `{folder}`") and ex.at > line.at for ex in calls):
                continue
            regrep = [ex for ex in calls if ex.at > line.at and _is_grep(ex, folder, pattern, True)]
            if not regrep:
                return calls_reply(
                    f"{line.sender} says my figure for {folder} is off; grepping again with "
                    f"{pattern!r}.",
                    [_grep(folder, pattern, True)],
                    latency,
                )
            markers, files = grep_counts(regrep[-1].content)
            text = _line("revised", folder, markers, files)
            return calls_reply(
                f"Revised {folder}: {markers} markers in {files} files.",
                [
                    ("SendMessage", {"to": line.sender, "message": text}),
                    ("SendMessage", {"to": "lead", "message": text}),
                ],
                latency,
            )
        return None

    @staticmethod
    def _survey(
        calls: Sequence[Exchange],
        said: Sequence[Said],
        claims: Sequence[_Claim],
        done: set[str],
        surveyed: set[str],
        latency: float,
    ) -> Reply | None:
        """A survey I claimed: grep the folder, tell everyone the figure, complete the task."""
        for claim in claims:
            if claim.kind != "Survey" or claim.task_id in done:
                continue
            found = [ex for ex in calls if _is_grep(ex, claim.folder, SURVEY_PATTERN, False)]
            if not found:
                return calls_reply(
                    f"Surveying {claim.folder}.",
                    [_grep(claim.folder, SURVEY_PATTERN, False)],
                    latency,
                )
            markers, files = grep_counts(found[-1].content)
            return calls_reply(
                f"{claim.folder}: {markers} markers in {files} files; telling the team.",
                [
                    (
                        "SendMessage",
                        {"to": "*", "message": _line("figure", claim.folder, markers, files)},
                    ),
                    ("TaskUpdate", {"taskId": claim.task_id, "status": "completed"}),
                ],
                latency,
            )
        return None

    @staticmethod
    def _check(
        calls: Sequence[Exchange],
        said: Sequence[Said],
        claims: Sequence[_Claim],
        done: set[str],
        surveyed: set[str],
        latency: float,
    ) -> Reply | None:
        """A check I claimed: grep again, compare with the surveyor's latest figure, then
        agree (and complete) or send a correction and wait for the revision."""
        for claim in claims:
            if claim.kind != "Check" or claim.task_id in done:
                continue
            folder = claim.folder
            mine = [ex for ex in calls if _is_grep(ex, folder, CHECK_PATTERN, True)]
            if not mine:
                return calls_reply(
                    f"Checking {folder} again with {CHECK_PATTERN!r}.",
                    [_grep(folder, CHECK_PATTERN, True)],
                    latency,
                )
            markers, files = grep_counts(mine[-1].content)
            theirs = [s for s in said if s.folder == folder and s.kind in ("figure", "revised")]
            if not theirs:
                continue  # the surveyor's figure has not reached me yet
            latest = theirs[-1]
            corrections = [ex for ex in calls if _sent(ex, f"correction `{folder}`")]
            agreed = (latest.markers, latest.files) == (markers, files)
            if agreed or len(corrections) >= MAX_CORRECTIONS:
                return calls_reply(
                    f"{folder}: {markers} markers in {files} files, as "
                    f"{'the surveyor says' if agreed else 'I count (the surveyor differs)'}.",
                    [
                        (
                            "SendMessage",
                            {"to": "lead", "message": _line("agree", folder, markers, files)},
                        ),
                        ("TaskUpdate", {"taskId": claim.task_id, "status": "completed"}),
                    ],
                    latency,
                )
            if any(ex.at > latest.at for ex in corrections):
                continue  # corrected already; waiting for the revision
            return calls_reply(
                f"{latest.sender} counted {latest.markers} in {folder}; I count {markers}.",
                [
                    (
                        "SendMessage",
                        {
                            "to": latest.sender,
                            "message": _line("correction", folder, markers, files, CHECK_PATTERN),
                        },
                    )
                ],
                latency,
            )
        return None

    @staticmethod
    def _claim_next(
        messages: Sequence[Message],
        calls: Sequence[Exchange],
        surveyed: set[str],
        alone: bool,
        latency: float,
        me: str = "?",
        team: Sequence[str] = (),
    ) -> Reply | None:
        """Look at the board when something happened since I last did; claim what I may.

        Surveys are dealt round the roster (the n-th survey task on the board to
        the n-th teammate, modulo the team's size), so every teammate surveys and
        reports a figure however Trio happens to schedule them; checks go to
        whoever is free first, never to the folder's own surveyor.
        """
        lists = [ex for ex in calls if ex.name == "TaskList" and ex.content is not None]
        last = lists[-1].answered[0] if lists else -1
        # New claimable work is announced (the wake-up note), or follows my own change.
        news = any(
            is_instruction(m) and _WAKE in message_text(m) for m in messages[last + 1 :]
        ) or any(ex.name == "TaskUpdate" and ex.at > last for ex in calls)
        if news or not lists:
            return calls_reply("Looking at the board.", [("TaskList", {})], latency)
        tried = {str(ex.input.get("taskId")) for ex in calls if ex.name == "TaskUpdate"}
        rows = (board_data(lists[-1].content) or {}).get("tasks") or []
        surveys = [
            str(row.get("id"))
            for row in rows
            if (found := _SUBJECT.match(str(row.get("subject", "")))) and found.group(1) == "Survey"
        ]
        for row in rows:
            subject = _SUBJECT.match(str(row.get("subject", "")))
            if subject is None or str(row.get("id")) in tried:
                continue
            if subject.group(1) == "Survey" and me in team and len(team) > 1:
                dealt = team[surveys.index(str(row.get("id"))) % len(team)]
                if dealt != me:
                    continue  # dealt to another teammate
            if row.get("status") != "pending" or row.get("owner") or row.get("blockedBy"):
                continue
            if subject.group(1) == "Check" and subject.group(2) in surveyed and not alone:
                continue  # another teammate checks my own figures
            return calls_reply(
                f"Claiming task {row['id']}: {row['subject']}.",
                [("TaskUpdate", {"taskId": str(row["id"]), "status": "in_progress"})],
                latency,
            )
        return None


@attrs.frozen
class TeamLeadPolicy:
    """The lead: lists the folders, puts survey and check tasks on the board, waits for
    every folder to be agreed, and writes the table."""

    latency: float = 0.0

    def __call__(self, request: ModelRequest) -> Reply:
        messages = request.messages
        calls = exchanges(messages)
        latency = jitter(self.latency, request)
        listing = [ex for ex in calls if ex.name == "LS" and ex.content is not None]
        if not listing:
            return calls_reply("Listing the folders to survey.", [("LS", {"path": "."})], latency)
        creates = [ex for ex in calls if ex.name == "TaskCreate"]
        if not creates:
            folders, _files, _complete = parse_ls(listing[-1].content or "")
            chosen = sorted(f for f in folders if _safe(f))[:MAX_FOLDERS] or ["."]
            return calls_reply(
                f"Putting {len(chosen)} survey tasks on the board.",
                [
                    ("TaskCreate", {"subject": subject_of("Survey", f), "description": _about(f)})
                    for f in chosen
                ],
                latency,
            )
        surveys = self._created(creates, "Survey")
        if not self._created(creates, "Check"):
            return calls_reply(
                "Each survey gets a check by another teammate, once it is done.",
                [
                    (
                        "TaskCreate",
                        {
                            "subject": subject_of("Check", folder),
                            "description": f"Grep `{folder}` again and agree or correct the "
                            "surveyor's figure.",
                            "blockedBy": [task_id],
                        },
                    )
                    for folder, task_id in surveys.items()
                ],
                latency,
            )
        said = peer_lines(messages)
        agreed = {s.folder: s for s in said if s.kind == "agree"}
        missing = [f for f in surveys if f not in agreed]
        if missing:
            return final_reply(
                request,
                f"Waiting for the team: {len(surveys) - len(missing)} of {len(surveys)} folders "
                f"agreed (still open: {', '.join(missing)}).",
                latency,
            )
        return final_reply(request, _table(surveys, agreed, said), latency)

    @staticmethod
    def _created(creates: Sequence[Exchange], kind: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for ex in creates:
            task = (board_data(ex.content) or {}).get("task") or {}
            subject = _SUBJECT.match(str(task.get("subject", "")))
            if subject is not None and subject.group(1) == kind:
                found[subject.group(2)] = str(task["id"])
        return found


def _safe(folder: str) -> bool:
    """A folder worth surveying whose name the message formats can carry."""
    return (
        not folder.startswith(".")
        and "`" not in folder
        and "\n" not in folder
        and len(folder) <= 200
        and folder not in ("node_modules", "__pycache__")
    )


def _about(folder: str) -> str:
    return (
        f"Count the lines with TODO-style markers under `{folder}` (Grep, count mode), tell "
        "the team your figure, then complete this task."
    )


def _table(surveys: Mapping[str, str], agreed: Mapping[str, Said], said: Sequence[Said]) -> str:
    rows = [
        "The team agrees on these figures (lines with TODO, FIXME or XXX, any case):",
        "",
        "| folder | marker lines | files | checked by | revisions |",
        "|---|---:|---:|---|---:|",
    ]
    total = 0
    for folder in surveys:
        line = agreed[folder]
        revisions = sum(1 for s in said if s.kind == "revised" and s.folder == folder)
        rows.append(f"| {folder} | {line.markers} | {line.files} | {line.sender} | {revisions} |")
        total += line.markers
    rows += ["", f"Total: {total} marker lines in {len(surveys)} folders."]
    return "\n".join(rows)


def team_policies(latency: float = 0.0) -> dict[str, ReplyPolicy]:
    """The scripted policies of the offline ``subagents team``: teammates, and the lead
    for every other agent type."""
    return {MATE_TYPE: TeammatePolicy(latency), "*": TeamLeadPolicy(latency)}
