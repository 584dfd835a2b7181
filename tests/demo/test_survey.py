"""The offline survey policies: Explore agents and a lead that do real work with the real tools.

Explore runs for real (``run_agent``, the built-in tools, the scripted
provider) on a temporary tree with known contents, and every fact of its
report is checked against a plain Python walk of the folder. The lead is
checked turn by turn on hand-built conversations (limit errors, out-of-order
finishes, notices, a failed child), and end to end with a small in-test
:class:`AgentHost` that runs real Explore children under an agent limit.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import attrs
import pytest
import trio

from subagents.actors import (
    NOT_FOUND,
    RUNNING,
    AgentLimitReached,
    ChildFinished,
    Completed,
    Status,
    WaitResult,
    is_live,
)
from subagents.agents import AgentDefinition, builtin_agents
from subagents.demo._survey.common import (
    folder_task,
    followup_question,
    json_blocks,
    parse_folder,
    parse_question,
    survey_policies,
)
from subagents.demo._survey.explore import ExplorePolicy
from subagents.demo._survey.lead import LeadPolicy
from subagents.runtime import (
    COMPLETE_TASK,
    AgentSpec,
    Conversation,
    Limits,
    Message,
    ModelRequest,
    Origin,
    Reply,
    RunControl,
    ScriptedProvider,
    TerminateReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    as_input,
    prepare_task,
    run_agent,
)
from subagents.tools import (
    GlobTool,
    LSTool,
    SendInputTool,
    SpawnAgentTool,
    SpawnedAgent,
    ToolContext,
    ToolPolicy,
    ToolSelection,
    WaitBounds,
    WaitTool,
    builtin_tools,
    filter_tools,
    tool_policy,
)

EXPLORE = next(d for d in builtin_agents() if d.name == "Explore")
LEAD = AgentDefinition(
    name="lead", description="Surveys the working directory.", system_prompt="Lead in ${cwd}."
)

# -- the tree -------------------------------------------------------------------------------------

TREE: dict[str, str | bytes] = {
    "README.md": "# Demo\n\nTODO: describe\n",
    "setup.cfg": "[metadata]\nname = demo\n",
    ".git/config": "[core]\n# TODO not counted: .git is never surveyed\n",
    "node_modules/left-pad/index.js": "module.exports = 1 // TODO\n",
    "src/app/__main__.py": (
        '"""Run the demo."""\nfrom app.core import run\n\n# TODO: flags\nrun()\n'
    ),
    "src/app/core.py": "".join(f"x{i} = {i}\n" for i in range(28))
    + "# FIXME: slow\n# FIXME: wrong\n",
    "src/app/util.py": "def f():\n    return 1  # no newline at the end",
    "src/app/__init__.py": "",
    "src/app/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR TODO",
    "src/tests/test_core.py": "def test_run():\n    assert True  # TODO more\n",
    "src/tests/conftest.py": "import pytest\n",
    "src/.hidden.toml": "a = 1\n",
    "web/index.js": "import './styles/main.css'\n// TODO and FIXME on one line\n",
    "web/index.test.js": "test('x', () => {})\n",
    "web/package.json": '{\n  "name": "web",\n  "main": "index.js"\n}\n',
    "web/styles/main.css": "body {}\n\n\n",
    "web/notes.txt": "\n",
    "docs/guide.md": "# Guide\n\nFIXME: screenshots\n",
    "docs/api/ref.rst": "Reference\n=========\n",
    "tools/main.go": "package main\n\nfunc main() {}\n",
    "tools/main_test.go": "package main\n",
    "tools/Makefile": "all:\n\tgo build\n",
}
FOLDERS = ("docs", "empty", "src", "tools", "web")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, content in TREE.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "src" / "app" / "link.py").symlink_to(tmp_path / "src" / "app" / "core.py")
    return tmp_path


def walk(root: Path, folder: str) -> dict[str, Any]:
    """The facts of ``folder`` worked out with plain Python, as the tools define them.

    Regular files only (no symlinks), .git/.hg/.svn never entered; a file is
    binary when a NUL byte is in its first 8 KiB; its lines are its newline
    count, plus one when the last line has no newline; TODO/FIXME counts lines.
    """
    facts: dict[str, Any] = {"files": 0, "lines": 0, "todo_fixme": 0, "binary_files": 0}
    facts.update(text_files=0, empty_files=0, todo_fixme_files=0)
    extensions: Counter[str] = Counter()
    per_file: dict[str, int] = {}
    base = root if folder == "." else root / folder
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in {".git", ".hg", ".svn"}]
        for name in filenames:
            path = Path(dirpath, name)
            if path.is_symlink() or not path.is_file():
                continue
            facts["files"] += 1
            extensions[PurePosixPath(name).suffix.lower() or "(none)"] += 1
            data = path.read_bytes()
            if b"\x00" in data[:8192]:
                facts["binary_files"] += 1
                continue
            if not data:
                facts["empty_files"] += 1
                continue
            lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
            todo = sum(
                1
                for line in data.decode("utf-8", "replace").split("\n")
                if re.search("TODO|FIXME", line)
            )
            facts["text_files"] += 1
            facts["lines"] += lines
            facts["todo_fixme"] += todo
            facts["todo_fixme_files"] += 1 if todo else 0
            per_file[path.relative_to(root).as_posix()] = lines
    facts["extensions"] = dict(extensions)
    facts["per_file"] = per_file
    return facts


# -- running agents -------------------------------------------------------------------------------


def explore_tools(**glob: Any) -> ToolSelection:
    tools = [t for t in builtin_tools() if t.name != "Glob"] + [GlobTool(**glob)]
    return filter_tools(tools, tool_policy(EXPLORE))


def explore_spec(root: Path, tools: ToolSelection | None = None) -> AgentSpec:
    return AgentSpec(
        definition=EXPLORE,
        provider=ScriptedProvider(policies=survey_policies(latency=0)),
        model="claude-test",
        system_prompt="Explore",
        tools=tools or explore_tools(),
        limits=Limits.for_definition(EXPLORE),
        workspace_root=root,
    )


async def explore(
    root: Path, prompt: str, tools: ToolSelection | None = None
) -> tuple[str, Conversation, AgentSpec]:
    task = prepare_task(EXPLORE, prompt, cwd=root)
    spec = explore_spec(root, tools)
    result = await run_agent(spec, task.conversation)
    assert result.terminate_reason is TerminateReason.GOAL, result
    assert result.text is not None
    return result.text, task.conversation, spec


def facts_of(text: str) -> dict[str, Any]:
    blocks = [b for b in json_blocks(text) if "followup" not in b]
    assert len(blocks) == 1, text
    return blocks[0]


def tool_turns(conversation: Conversation) -> list[list[str]]:
    return [[u.name for u in m.tool_uses] for m in conversation if m.role == "assistant"]


def check_against_walk(facts: dict[str, Any], root: Path, folder: str) -> None:
    expected = walk(root, folder)
    for key in (
        "files",
        "lines",
        "text_files",
        "binary_files",
        "empty_files",
        "todo_fixme",
        "todo_fixme_files",
    ):
        assert facts[key] == expected[key], (folder, key)
    assert facts["extensions"] == expected["extensions"]
    assert facts["large_files"] == 0
    assert facts["exact"] is True
    assert facts["notes"] == []


# -- message formats ------------------------------------------------------------------------------


def test_the_folder_task_names_its_folder_explicitly() -> None:
    for folder in ("src", "with space", 'odd "quoted" `name`', "a/b", "."):
        assert parse_folder(folder_task(folder)) == folder
    assert parse_folder("Survey the folder `lib/` please") == "lib"
    assert parse_folder('notes\nfolder: "./pkg/"\n') == "pkg"
    assert parse_folder("folder: plain-name") == "plain-name"
    assert parse_folder("What is in here?") is None


def test_follow_up_questions_parse_from_the_explicit_line_or_the_prose() -> None:
    assert parse_question(followup_question("src", 3)) == ("largest-files", 3)
    assert parse_question("Which are your 5 biggest files?") == ("largest-files", 5)
    assert parse_question("And the largest files?") == ("largest-files", 3)
    assert parse_question("List the TODO lines") == ("todo-lines", 0)
    assert parse_question("Thanks!") == ("other", 0)


# -- Explore --------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", FOLDERS)
async def test_explore_reports_exact_facts_for_each_folder(tree: Path, folder: str) -> None:
    text, conversation, _ = await explore(tree, folder_task(folder))
    facts = facts_of(text)
    assert facts["folder"] == folder
    check_against_walk(facts, tree, folder)
    turns = tool_turns(conversation)
    if folder == "empty":
        assert turns == [["Glob"], []]
        assert facts["files"] == 0
    assert turns[0] == ["Glob"]
    assert text.startswith(f"Surveyed `{folder}`: ")


async def test_explore_reports_languages_tests_and_entry_points(tree: Path) -> None:
    text, conversation, _ = await explore(tree, folder_task("src"))
    facts = facts_of(text)
    assert tool_turns(conversation) == [["Glob"], ["Grep", "Grep"], ["Read"], []]
    assert facts["languages"] == {"Python": 6, "TOML": 1}
    assert facts["tests"] == 1
    assert facts["test_files"] == ["src/tests/test_core.py"]
    assert facts["test_dirs"] == ["src/tests"]
    assert facts["entry_points"] == ["src/app/__main__.py"]
    assert facts["entry_point_heads"] == {"src/app/__main__.py": '"""Run the demo."""'}
    assert "10 lines" not in text
    assert f"{facts['lines']} lines" in text

    text, conversation, _ = await explore(tree, folder_task("web"))
    facts = facts_of(text)
    assert tool_turns(conversation) == [["Glob"], ["Grep", "Grep"], ["Read", "Read"], []]
    assert facts["entry_points"] == ["web/index.js", "web/package.json"]
    assert facts["entry_point_heads"]["web/package.json"] == "{"
    assert facts["test_files"] == ["web/index.test.js"]
    assert facts["languages"] == {"CSS": 1, "JavaScript": 2, "JSON": 1, "Text": 1}

    facts = facts_of((await explore(tree, folder_task("tools")))[0])
    assert facts["test_files"] == ["tools/main_test.go"]
    assert facts["entry_points"] == ["tools/main.go"]
    assert facts["languages"] == {"Go": 2, "Makefile": 1}


async def test_explore_answers_a_follow_up_with_one_more_tool_call(tree: Path) -> None:
    _, conversation, spec = await explore(tree, folder_task("src"))
    before = len(tool_turns(conversation))
    conversation.append(Message.user(followup_question("src", 2), origin=Origin.INPUT))
    result = await run_agent(spec, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert tool_turns(conversation)[before:] == [["Grep"], []]
    assert result.tool_uses == 1
    per_file = walk(tree, "src")["per_file"]
    top = sorted(per_file.items(), key=lambda item: (-item[1], item[0]))[:2]
    (answer,) = [b for b in json_blocks(result.text or "") if b.get("followup")]
    assert answer == {
        "followup": "largest-files",
        "folder": "src",
        "files": [{"path": p, "lines": n} for p, n in top],
    }
    assert answer["files"][0] == {"path": "src/app/core.py", "lines": 30}

    conversation.append(Message.user("Where are the TODO lines?", origin=Origin.INPUT))
    result = await run_agent(spec, conversation)
    (answer,) = [b for b in json_blocks(result.text or "") if b.get("followup")]
    assert answer["total"] == walk(tree, "src")["todo_fixme"] == len(answer["lines"])
    assert "src/app/core.py:29:# FIXME: slow" in answer["lines"]


async def test_explore_splits_a_folder_when_glob_is_capped(tree: Path) -> None:
    # Every directory of src holds at most 3 files of its own, so splitting makes it exact.
    text, conversation, _ = await explore(tree, folder_task("src"), explore_tools(max_results=3))
    facts = facts_of(text)
    check_against_walk(facts, tree, "src")
    assert facts["languages"] == {"Python": 6, "TOML": 1}
    turns = tool_turns(conversation)
    assert turns[:3] == [["Glob"], ["LS"], ["Glob", "Glob", "Glob"]]
    assert ["LS"] in turns[3:]  # src/app (5 files) is split again
    assert facts["entry_points"] == ["src/app/__main__.py"]


def age(root: Path, *names: str, seconds: int) -> None:
    for name in names:
        os.utime(root / name, (seconds, seconds))


async def test_explore_says_so_when_a_cap_keeps_names_out_of_reach(tree: Path) -> None:
    # src/app holds 5 files of its own: with a cap of 2, Glob names only the newest 2. Grep
    # names every text file it counts, but the empty and the binary file only Glob can name.
    app = ("__main__.py", "core.py", "util.py", "__init__.py", "logo.png")
    age(tree / "src/app", *app[:3], seconds=2_000_000)
    age(tree / "src/app", *app[3:], seconds=1_000_000)  # the oldest: not shown by Glob
    text, _, _ = await explore(tree, folder_task("src/app"), explore_tools(max_results=2))
    facts = facts_of(text)
    expected = walk(tree, "src/app")
    for key in ("files", "lines", "text_files", "binary_files", "empty_files", "todo_fixme"):
        assert facts[key] == expected[key], key
    assert facts["exact"] is False
    assert facts["extensions"] == {".py": 3}
    assert facts["notes"] == [
        "2 of 5 files were not named by any tool result: extensions, tests and entry points "
        "leave them out"
    ]
    assert "Some numbers are incomplete" in text

    # When Glob's newest are exactly the files Grep cannot name, nothing is missing.
    age(tree / "src/app", *app[3:], seconds=3_000_000)
    text, _, _ = await explore(tree, folder_task("src/app"), explore_tools(max_results=2))
    check_against_walk(facts_of(text), tree, "src/app")


async def test_explore_without_a_folder_surveys_the_working_directory(tree: Path) -> None:
    text, _, _ = await explore(tree, "What is in this repository?")
    facts = facts_of(text)
    assert facts["folder"] == "."
    check_against_walk(facts, tree, ".")
    assert text.startswith("Surveyed the working directory: ")


async def test_explore_reports_a_folder_it_cannot_list(tree: Path) -> None:
    text, _, _ = await explore(tree, folder_task("missing"))
    facts = facts_of(text)
    assert facts["folder"] == "missing"
    assert facts["error"] == "'missing' is not a directory."
    assert facts["exact"] is False


async def test_explore_resumes_from_the_conversation_alone(tree: Path) -> None:
    text, conversation, spec = await explore(tree, folder_task("src"))
    # Cut the conversation after the Grep results, as a crash would, and go on.
    cut = Conversation(list(conversation)[:5])
    assert cut.last is not None
    assert cut.last.origin is Origin.TOOL_RESULTS
    result = await run_agent(spec, cut)
    assert result.text == text
    assert tool_turns(cut) == tool_turns(conversation)


def test_explore_ends_with_complete_task_in_a_grace_turn() -> None:
    messages = [Message.user(folder_task("src"), origin=Origin.TASK)]
    request = ModelRequest(
        model="m",
        system="s",
        messages=messages,
        tools=[{"name": COMPLETE_TASK}],
        grace=True,
    )
    reply = ExplorePolicy(latency=0)(request)
    (call,) = reply.tool_calls
    assert call.name == COMPLETE_TASK
    assert not isinstance(call.input, str)
    facts = facts_of(str(call.input["result"]))
    assert facts["exact"] is False
    assert "stopped before it was finished" in facts["notes"][0]


def test_explore_reads_only_its_own_messages_after_a_fork() -> None:
    messages = [
        Message.user(folder_task("parent-folder"), origin=Origin.TASK),
        Message.assistant("The parent's answer."),
        Message.user("(context above)", origin=Origin.FORK_BOUNDARY),
        Message.user(folder_task("src"), origin=Origin.TASK),
    ]
    request = ModelRequest(model="m", system="s", messages=messages, tools=())
    reply = ExplorePolicy(latency=0)(request)
    assert [(c.name, c.input) for c in reply.tool_calls] == [
        ("Glob", {"pattern": "**/*", "path": "src"})
    ]


def test_replies_take_a_small_deterministic_latency() -> None:
    policies = survey_policies(latency=0.2)
    assert set(policies) == {"Explore", "*"}
    messages = [Message.user(folder_task("src"), origin=Origin.TASK)]
    delays = []
    for turn in range(5):
        request = ModelRequest(
            model="m", system="s", messages=messages, agent_id="a1", turn=turn, tools=()
        )
        reply = policies["Explore"](request)
        assert isinstance(reply, Reply)
        assert reply.latency is not None
        assert 0.1 <= reply.latency <= 0.3
        again = policies["Explore"](request)
        assert isinstance(again, Reply)
        assert again.latency == reply.latency
        delays.append(reply.latency)
    assert len(set(delays)) > 1
    assert ExplorePolicy(latency=0)(request).latency == 0


# -- the lead, turn by turn -----------------------------------------------------------------------

LEAD_TOOLS = [{"name": n} for n in ("LS", "spawn_agent", "wait", "send_input")]


def report(folder: str, files: int, lines: int, **extra: Any) -> str:
    facts = {
        "folder": folder,
        "files": files,
        "lines": lines,
        "languages": extra.pop("languages", {"Python": files}),
        "todo_fixme": extra.pop("todo_fixme", 0),
        "tests": extra.pop("tests", 0),
        "entry_points": extra.pop("entry_points", []),
        "exact": True,
        "notes": [],
        **extra,
    }
    return f"Surveyed `{folder}`.\n\n```json\n{json.dumps(facts)}\n```"


@attrs.define
class Lead:
    """A lead conversation played by hand: the policy's calls, answered by the test."""

    policy: LeadPolicy = attrs.field(factory=lambda: LeadPolicy(latency=0))
    messages: list[Message] = attrs.field(
        factory=lambda: [Message.user("Survey this repository.", origin=Origin.TASK)]
    )

    def turn(self) -> Reply:
        turns = sum(1 for m in self.messages if m.role == "assistant")
        request = ModelRequest(
            model="m", system="s", messages=self.messages, tools=LEAD_TOOLS, turn=turns
        )
        reply = self.policy(request)
        assert isinstance(reply, Reply)
        return reply

    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        reply = self.turn()
        uses = tuple(
            ToolUseBlock(f"t{len(self.messages)}_{i}", c.name, dict(c.input))  # type: ignore[arg-type]
            for i, c in enumerate(reply.tool_calls)
        )
        self.messages.append(Message("assistant", (TextBlock(reply.text), *uses), Origin.MODEL))
        return [(u.name, u.input) for u in uses]

    def answer(self, *results: str | tuple[str, bool]) -> None:
        last = self.messages[-1]
        blocks = []
        for use, result in zip(last.tool_uses, results, strict=True):
            content, error = result if isinstance(result, tuple) else (result, False)
            blocks.append(ToolResultBlock(use.id, content, error))
        self.messages.append(Message("user", tuple(blocks), Origin.TOOL_RESULTS))

    def notice(self, agent_id: str, nickname: str, status: Status) -> None:
        self.messages.append(as_input(ChildFinished(agent_id, nickname, status)))


def spawned(agent_id: str, nickname: str) -> str:
    return json.dumps({"agent_id": agent_id, "nickname": nickname})


def waited(timed_out: bool = False, **statuses: dict[str, Any]) -> str:
    return json.dumps({"status": statuses, "timed_out": timed_out})


LIMIT = (str(AgentLimitReached(3)), True)


def test_the_lead_queues_at_the_limit_and_gathers_results_in_any_order() -> None:
    lead = Lead()
    assert lead.calls() == [("LS", {"path": "."})]
    lead.answer("./\n  .git/\n  .venv/\n  alpha/\n  beta/\n  gamma/\n  README.md\n  link@")

    assert lead.calls() == [
        ("spawn_agent", {"agent_type": "Explore", "message": folder_task(f)})
        for f in ("alpha", "beta", "gamma")
    ]
    lead.answer(spawned("a1", "Ada"), spawned("a2", "Bob"), LIMIT)

    # Two children run and the third was refused: wait for the two, queue gamma.
    assert lead.calls() == [("wait", {"ids": ["a1", "a2"], "timeout_ms": 300_000})]
    beta = report("beta", 4, 90, languages={"Go": 3, "Text": 1}, todo_fixme=2, tests=1)
    lead.answer(waited(a1={"kind": "running"}, a2={"kind": "completed", "result": beta}))

    # Bob (beta) finished first: his slot goes to gamma, and the lead waits for Ada.
    assert lead.calls() == [
        ("spawn_agent", {"agent_type": "Explore", "message": folder_task("gamma")}),
        ("wait", {"ids": ["a1"], "timeout_ms": 300_000}),
    ]
    lead.answer(spawned("a3", "Cy"), waited(True, a1={"kind": "running"}))
    alpha = report("alpha", 10, 120, entry_points=["alpha/main.py"], tests=2, todo_fixme=1)
    lead.notice("a1", "Ada", Completed(alpha))  # Ada's finish arrives as a notice

    assert lead.calls() == [("wait", {"ids": ["a3"], "timeout_ms": 300_000})]
    lead.answer(waited(a3={"kind": "errored", "message": "model overloaded"}))
    lead.notice("a3", "Cy", Completed("late and ignored"))

    # All done: one follow-up to the largest folder (alpha, 120 lines).
    assert lead.calls() == [
        ("send_input", {"id": "a1", "message": followup_question("alpha", 3)}),
        ("wait", {"ids": ["a1"], "timeout_ms": 300_000}),
    ]
    answer = (
        'The 3 largest files...\n\n```json\n{"followup": "largest-files", "folder": "alpha", '
        '"files": [{"path": "alpha/big.py", "lines": 70}, {"path": "alpha/main.py", '
        '"lines": 30}, {"path": "alpha/x.py", "lines": 20}]}\n```'
    )
    lead.answer(
        json.dumps({"status": {"kind": "running"}}),
        waited(a1={"kind": "completed", "result": answer}),
    )
    lead.notice("a1", "Ada", Completed(answer))  # the same finish, again as a notice

    reply = lead.turn()
    assert reply.tool_calls == ()
    summary = reply.text
    assert "| alpha/ | 10 | 120 | Python 10 | 1 | 2 |" in summary
    assert "| beta/ | 4 | 90 | Go 3, Text 1 | 2 | 1 |" in summary
    assert "| gamma/ | ? | ? | ? | ? | ? |" in summary
    assert "| **Total** | 14 | 210 | Python 10, Go 3, Text 1 | 3 | 3 |" in summary
    assert summary.index("| alpha/") < summary.index("| beta/") < summary.index("| gamma/")
    assert "Surveyed 2 of 3 top-level folders" in summary
    assert "the agent limit was reached once" in summary
    assert "Incomplete: `gamma`: errored: model overloaded." in summary
    assert "Top-level files (not in any folder, not counted above): 1." in summary
    assert "Not surveyed: .git/, .venv/." in summary
    assert "Entry points: alpha/main.py." in summary
    assert (
        "Follow-up to Ada (`alpha`), the largest folder: its 3 largest files are "
        "alpha/big.py (70 lines), alpha/main.py (30 lines), alpha/x.py (20 lines)."
    ) in summary
    (data,) = json_blocks(summary)
    assert data["totals"] == {
        "files": 14,
        "lines": 210,
        "todo_fixme": 3,
        "tests": 3,
        "languages": {"Python": 10, "Go": 3, "Text": 1},
    }


def test_the_lead_gives_up_on_a_folder_when_no_slot_of_its_own_can_free_up() -> None:
    lead = Lead()
    lead.calls()
    lead.answer("./\n  only/")
    assert [name for name, _ in lead.calls()] == ["spawn_agent"]
    lead.answer(LIMIT)  # refused while none of its children runs: nothing to wait for
    reply = lead.turn()
    assert reply.tool_calls == ()
    assert "| only/ | ? |" in reply.text
    assert "Agent limit reached" in reply.text


def test_the_lead_summarises_in_its_grace_turn_through_complete_task() -> None:
    lead = Lead()
    lead.calls()
    lead.answer("./\n  a/")
    lead.calls()
    lead.answer(spawned("a1", "Ada"))
    request = ModelRequest(
        model="m", system="s", messages=lead.messages, tools=[{"name": COMPLETE_TASK}], grace=True
    )
    reply = lead.policy(request)
    assert isinstance(reply, Reply)
    (call,) = reply.tool_calls
    assert call.name == COMPLETE_TASK
    assert not isinstance(call.input, str)
    assert "Incomplete: `a`: still running." in str(call.input["result"])


# -- the whole survey, end to end -----------------------------------------------------------------


@attrs.define
class Child:
    agent_id: str
    nickname: str
    conversation: Conversation
    status: Status = RUNNING


@attrs.define
class Host:
    """Just enough of an AgentHost: Explore children run for real under an agent limit."""

    root: Path
    nursery: trio.Nursery
    max_threads: int
    lead: RunControl = attrs.field(factory=RunControl)
    children: dict[str, Child] = attrs.field(factory=dict)
    changed: trio.Event = attrs.field(factory=trio.Event)
    refusals: int = 0
    most_live: int = 0
    wait_bounds: WaitBounds = attrs.field(
        factory=lambda: WaitBounds(default_seconds=30, min_seconds=0, max_seconds=300)
    )

    def live(self) -> int:
        return sum(1 for c in self.children.values() if is_live(c.status))

    def _take_slot(self) -> None:
        if self.live() >= self.max_threads:
            self.refusals += 1
            raise AgentLimitReached(self.max_threads)

    async def spawn(
        self, caller: ToolContext, *, agent_type: str | None, prompt: str, **_: Any
    ) -> SpawnedAgent:
        assert agent_type == "Explore"
        self._take_slot()
        number = len(self.children) + 1
        task = prepare_task(EXPLORE, prompt, cwd=self.root)
        child = Child(f"agent-{number}", f"scout{number}", task.conversation)
        self.children[child.agent_id] = child
        self._start(child)
        return SpawnedAgent(child.agent_id, child.nickname, "Explore")

    def _start(self, child: Child) -> None:
        child.status = RUNNING
        self.most_live = max(self.most_live, self.live())
        self.nursery.start_soon(self._run, child)

    async def _run(self, child: Child) -> None:
        result = await run_agent(explore_spec(self.root), child.conversation)
        child.status = Completed(result.report())
        self.lead.add_input(as_input(ChildFinished(child.agent_id, child.nickname, child.status)))
        self.changed.set()
        self.changed = trio.Event()

    async def wait(
        self, caller: ToolContext, agent_ids: Sequence[str], *, timeout: float
    ) -> WaitResult:
        def statuses() -> dict[str, Status]:
            return {
                i: self.children[i].status if i in self.children else NOT_FOUND for i in agent_ids
            }

        with trio.move_on_after(timeout):
            while all(is_live(s) for s in statuses().values()):
                await self.changed.wait()
        done = statuses()
        return WaitResult(done, timed_out=all(is_live(s) for s in done.values()))

    async def send_input(
        self, caller: ToolContext, agent_id: str, message: str, *, interrupt: bool = False
    ) -> Status:
        child = self.children[agent_id]
        child.conversation.append(as_input(message))
        if not is_live(child.status):
            self._take_slot()
            self._start(child)
        return child.status

    def agent_types(self) -> Sequence[tuple[str, str]]:
        return [("Explore", EXPLORE.description)]


async def test_the_whole_survey_is_right_for_the_directory(tree: Path) -> None:
    async with trio.open_nursery() as nursery:
        host = Host(tree, nursery, max_threads=2)
        tools = (LSTool(), SpawnAgentTool(host), WaitTool(host), SendInputTool(host))  # type: ignore[arg-type]
        spec = AgentSpec(
            definition=LEAD,
            provider=ScriptedProvider(policies=survey_policies(latency=0)),
            model="claude-test",
            system_prompt="lead",
            tools=filter_tools(tools, ToolPolicy(source="project", depth=0, max_depth=1)),
            workspace_root=tree,
        )
        conversation = Conversation([Message.user("Survey this directory.", origin=Origin.TASK)])
        with trio.fail_after(10):
            result = await run_agent(spec, conversation, control=host.lead)
        nursery.cancel_scope.cancel()
    assert result.terminate_reason is TerminateReason.GOAL, result
    summary = result.text or ""
    assert len(host.children) == len(FOLDERS)
    assert host.most_live == 2
    assert host.refusals >= 1

    (data,) = json_blocks(summary)
    rows = {r["folder"]: r for r in data["folders"]}
    assert sorted(rows) == list(FOLDERS)
    for folder in FOLDERS:
        expected = walk(tree, folder)
        row = rows[folder]
        for key in ("files", "lines", "text_files", "binary_files", "empty_files", "todo_fixme"):
            assert row[key] == expected[key], (folder, key)
        assert row["exact"] is True
        cells = f"| {folder}/ | {expected['files']} | {expected['lines']} |"
        assert cells in summary
    totals = [walk(tree, f) for f in FOLDERS]
    assert data["totals"]["files"] == sum(t["files"] for t in totals)
    assert data["totals"]["lines"] == sum(t["lines"] for t in totals)
    assert data["totals"]["todo_fixme"] == sum(t["todo_fixme"] for t in totals)
    assert data["totals"]["tests"] == 3
    assert rows["src"]["languages"] == {"Python": 6, "TOML": 1}
    assert data["problems"] == []
    assert "Entry points: src/app/__main__.py, tools/main.go, web/index.js." in summary
    assert data["top_level_files"] == 2
    assert data["skipped"] == [".git", "node_modules"]
    assert f"| **Total** | {data['totals']['files']} | {data['totals']['lines']} |" in summary

    # The follow-up went to the largest folder (src, by lines) and came back right.
    per_file = walk(tree, "src")["per_file"]
    top = sorted(per_file.items(), key=lambda item: (-item[1], item[0]))[:3]
    listed = ", ".join(f"{p} ({n} lines)" for p, n in top)
    assert f"the largest folder: its 3 largest files are {listed}." in summary
    src = next(c for c in host.children.values() if "src" in c.conversation[0].text)
    assert any(m.origin is Origin.INPUT for m in src.conversation)
