"""Reliability, bad input from files: definitions, settings, ``--agents`` and transcripts.

The properties, each end to end (a runtime opened with ``open_runtime``, or the
``subagents`` command run in-process):

- **Definitions.** For any mutation of real Claude Code agent files (the vendored
  corpus: truncated, closing ``---`` dropped, random text or bytes inserted,
  frontmatter fields of the wrong type) and any YAML/JSON document, placed in
  ``.claude/agents`` next to a good agent: the runtime opens, every bad file
  has a report naming it whose errors carry a line, and the good agent still
  loads and runs.
- **Settings.** For any content of the user and project configuration files
  (TOML-ish lines, JSON, YAML, bytes) and any values of the ``SUBAGENTS_*``
  variables: the runtime opens (and runs an agent), or opening raises
  :class:`ConfigError` naming the file or the variable; never another error.
- **``--agents``.** For any text given to ``subagents run --agents``: text that
  is not a JSON object exits 2 with one line on stderr; an object runs, each
  bad entry reported as a definition problem naming ``<--agents>``, and the
  command ends 0 or 1 with at most one error line; never a traceback.
- **Transcripts.** For any damage to a real transcript (cut at any byte, lines
  duplicated, moved, overwritten, other agents' lines and garbage inserted):
  ``load_transcript`` gives a transcript or :class:`TranscriptError`, and
  ``Runtime.resume`` resumes or raises ``TranscriptError``; a resumed agent's
  conversation holds every message whose line was intact, in order, and the
  file is only appended to.

Parser-level fuzzing lives lower down: ``tests/agents/test_roundtrip.py``
(hostile frontmatter and documents), ``tests/runtime/config/test_loader.py``
(random overrides, environments and TOML) and
``tests/runtime/transcripts/test_load_fuzz.py`` (damaged transcripts, parsed);
their strategies are reused here.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents import SubagentsError, testing
from subagents.actors import Completed
from subagents.cli import main
from subagents.demo import survey_policies
from subagents.runtime import (
    ConfigError,
    Message,
    MessageRecord,
    ModelRequest,
    Reply,
    ScriptedProvider,
    Transcript,
    TranscriptError,
    load_transcript,
    open_runtime,
)
from tests.agents import strategies as agents_strategies
from tests.runtime import world as runtime_world
from tests.runtime.config import test_loader as settings_tests
from tests.runtime.transcripts import test_load_fuzz as transcript_fuzz
from tests.tools.builtin import test_properties as tools_hypothesis

_TESTS = Path(__file__).resolve().parents[1]
CORPUS = _TESTS / "fixtures" / "corpus" / "voltagent"


World = runtime_world.World

GOOD_AGENT = "good-agent-of-the-test"


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


def _answer(request: ModelRequest) -> Reply:
    return testing.say("ok")


def _run(scenario: Any, *args: Any) -> Any:
    return trio.run(scenario, *args, clock=trio.testing.MockClock(autojump_threshold=0))


# -- definitions --------------------------------------------------------------------------------


@functools.cache
def _corpus_files() -> tuple[Path, ...]:
    return tuple(sorted(p for p in CORPUS.rglob("*.md") if p.name != "README.md"))


_WRONG_VALUES = [
    "5", "[1, 2]", "{a: 1}", "true", "null", "''", "-1e400", "[[[", "!!python/object:os.system x"
]  # fmt: skip
_FIELDS = [
    "name", "description", "tools", "model", "maxTurns", "color", "hooks", "skills",
    "permissionMode",
]  # fmt: skip


@st.composite
def mutated_markdown(draw: st.DrawFn) -> bytes:
    """A corpus agent file, damaged one way or several."""
    data = draw(st.sampled_from(_corpus_files())).read_bytes()
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(st.sampled_from(["truncate", "unclose", "insert", "bytes", "field"]))
        at = draw(st.integers(min_value=0, max_value=len(data)))
        if kind == "truncate":
            data = data[:at]
        elif kind == "unclose":
            head, sep, tail = data.partition(b"\n---\n")
            data = head + b"\n" + tail if sep else data
        elif kind == "insert":
            data = (
                data[:at] + draw(st.text(max_size=30)).encode("utf-8", "surrogatepass") + data[at:]
            )
        elif kind == "bytes":
            data = data[:at] + draw(st.binary(min_size=1, max_size=20)) + data[at:]
        else:
            field = draw(st.sampled_from(_FIELDS))
            value = draw(st.sampled_from(_WRONG_VALUES))
            data = data.replace(b"\n", f"\n{field}: {value}\n".encode(), 1)
    return data


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _json_document(value: Any) -> bytes:
    return json.dumps(value, indent=1).encode()


def _with_frontmatter(frontmatter: str) -> bytes:
    return f"---\n{frontmatter}\n---\nBody\n".encode("utf-8", "surrogatepass")


bad_definition = st.one_of(
    st.tuples(st.just("md"), mutated_markdown()),
    st.tuples(st.just("md"), agents_strategies.frontmatter.map(_with_frontmatter)),
    st.tuples(st.just("yaml"), agents_strategies.frontmatter.map(_utf8)),
    st.tuples(st.just("json"), tools_hypothesis.JSON.map(_json_document)),
    st.tuples(
        st.just("json"),
        st.dictionaries(st.sampled_from(["agentType", "whenToUse", "tools", "runConfig", "x"]),
                        tools_hypothesis.JSON).map(_json_document),
    ),
)  # fmt: skip


async def _definitions_scenario(root: Path, files: list[tuple[str, bytes]]) -> None:
    world = World(root)
    good = world.agent(GOOD_AGENT).resolve()
    folder = world.project / ".claude" / "agents"
    written = []
    for index, (suffix, data) in enumerate(files):
        path = folder / f"bad-{index}.{suffix}"
        path.write_bytes(data)
        written.append(path.resolve())
    async with world.open(ScriptedProvider(_answer)) as rt:
        reports = {r.path.resolve(): r for r in rt.catalog.reports if r.path is not None}
        assert GOOD_AGENT in rt.catalog
        assert reports[good].ok
        for path in written:
            report = reports[path]  # every file is read and answered for
            if report.definitions:
                assert report.ok
            for error in report.errors:
                assert error.path is not None
                assert error.path.resolve() == path
                assert error.line is not None
                assert error.line >= 1
                assert error.message.strip()
                assert error.format().startswith(f"{error.path}:{error.line}: error: ")
            if report.errors:
                with pytest.raises(SubagentsError):
                    report.raise_for_errors()
        agent = (await rt.spawn(GOOD_AGENT, "Go.")).agent_id
        assert (await rt.wait([agent], timeout=60)).statuses[agent] == Completed("ok")


@_settings(40)
@given(files=st.lists(bad_definition, min_size=1, max_size=4))
def test_bad_definition_files_are_reported_by_name_and_the_good_ones_still_load(
    files: list[tuple[str, bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        _run(_definitions_scenario, Path(folder), files)


# -- settings -----------------------------------------------------------------------------------

_CONFIG_TEXT = st.one_of(
    st.lists(settings_tests._TOML_LINES, max_size=6).map("\n".join).map(str.encode),
    tools_hypothesis.JSON.map(json.dumps).map(str.encode),
    agents_strategies.structured_frontmatter.map(_utf8),
    st.binary(max_size=40),
)
# Where the state lives stays in the temporary folder: no variable may move it.
_ENV_NAMES = settings_tests._ENV_NAMES.filter(lambda name: name != "SUBAGENTS_STATE_DIR")
_ENV = st.dictionaries(_ENV_NAMES, settings_tests._ENV_TEXT, max_size=4)


async def _settings_scenario(
    root: Path, user: bytes | None, project: bytes | None, env: dict[str, str]
) -> None:
    world = World(root)
    files = {}
    if user is not None:
        files["user"] = world.home / ".subagents" / "config.toml"
    if project is not None:
        files["project"] = world.project / "subagents.toml"
    for key, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(user if key == "user" else project)  # type: ignore[arg-type]
    try:
        async with open_runtime(
            cwd=world.project, home=world.home, env=env, provider=ScriptedProvider(_answer)
        ) as rt:
            agent = (await rt.spawn("general-purpose", "Go.")).agent_id
            status = (await rt.wait([agent], timeout=3600)).statuses[agent]
            assert status == Completed("ok") or rt.config.limits.max_time_seconds < 1
    except ConfigError as error:
        _check_config_error(error, env, files)


def _check_config_error(error: ConfigError, env: dict[str, str], files: dict[str, Path]) -> None:
    message = str(error)
    if error.variable is not None:
        assert error.variable in env
        assert message.startswith(f"environment variable {error.variable}: ")
    else:
        assert error.path in files.values(), (error.path, message)
        assert message.startswith(str(error.path))
    if error.key:
        assert error.key in message


@_settings(60)
@given(
    user=st.one_of(st.none(), st.none(), _CONFIG_TEXT),
    project=st.one_of(st.none(), st.none(), _CONFIG_TEXT),
    env=_ENV,
)
def test_any_settings_files_and_environment_give_a_runtime_or_a_config_error(
    user: bytes | None, project: bytes | None, env: dict[str, str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        _run(_settings_scenario, Path(folder), user, project, env)


# -- --agents -----------------------------------------------------------------------------------

agents_text = st.one_of(
    st.text(max_size=40),
    tools_hypothesis.JSON.map(json.dumps),
    st.dictionaries(
        st.sampled_from(["lead", "reviewer", "Explore", ""]) | st.text(max_size=8),
        tools_hypothesis.JSON
        | st.dictionaries(st.sampled_from(["description", "prompt", "tools", "model"]),
                          tools_hypothesis.JSON, max_size=4),
        max_size=3,
    ).map(json.dumps),
)  # fmt: skip


@pytest.fixture
def quiet_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project, a home in ``tmp_path``, no key or SUBAGENTS_* variables, no latency."""
    for name in list(os.environ):
        if name.startswith("SUBAGENTS_") or name == "ANTHROPIC_API_KEY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr("subagents.cli._run.survey_policies", lambda: survey_policies(latency=0.0))
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return project


@_settings(40)
@given(text=agents_text)
def test_any_agents_json_is_a_usage_error_or_a_run_never_a_traceback(
    quiet_cli: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    state = quiet_cli.parent / "state"
    code = main(["run", "Survey", "--cwd", str(quiet_cli), "--state-dir", str(state),
                 "--json", f"--agents={text}"])  # fmt: skip
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # Lines as a terminal shows them (str.splitlines would also split at NEL, U+2028...).
    lines = [line for line in err.split("\n") if line.strip()]
    try:
        value = json.loads(text)
    except ValueError:
        value = None
        assert (code, len(lines)) == (2, 1), err
        assert lines[0].startswith("subagents run: --agents is not valid JSON"), err
        return
    if not isinstance(value, dict):
        assert (code, len(lines)) == (2, 1), err
        assert lines[0].startswith("subagents run: --agents must be a JSON object"), err
        return
    assert code in (0, 1), err
    problems = [line for line in lines if "agent definition problem" in line]
    for line in problems:
        assert "<--agents>" in line
    others = [line for line in lines if line not in problems]
    assert len(others) <= 1, err
    assert all(line.startswith("subagents run: ") for line in others), err
    assert code == 0 or others, err


# -- transcripts --------------------------------------------------------------------------------


def _two_runs(request: ModelRequest) -> Reply:
    """Two LS calls, then an answer naming the newest input."""
    newest = next(m.text for m in reversed(request.messages) if m.role == "user" and m.text)
    if request.turn < 2:
        return testing.call("LS", path=".")
    return testing.say(f"done: {newest}")


def _answer_newest(request: ModelRequest) -> Reply:
    """An answer naming the newest input, with no tool call (no worker thread)."""
    newest = next(m.text for m in reversed(request.messages) if m.role == "user" and m.text)
    return testing.say(f"done: {newest}")


@functools.cache
def _original() -> tuple[str, str, bytes]:
    """A real transcript of two runs: the agent id, its path under the state folder, the bytes."""

    async def record(root: Path) -> tuple[str, str, bytes]:
        world = World(root)
        async with world.open(ScriptedProvider(_two_runs)) as rt:
            agent = (await rt.spawn("general-purpose", "First task.")).agent_id
            await rt.wait([agent], timeout=60)
            await rt.send_input(agent, "Second task.")
            await rt.wait([agent], timeout=60)
            path = rt.transcript_path(agent)
        assert path is not None
        return agent, str(path.relative_to(world.state)), path.read_bytes()

    with tempfile.TemporaryDirectory() as folder:
        # A real clock: LS reads in a worker thread, and an autojumping clock would
        # jump to the wait's deadline meanwhile. Nothing here waits on time.
        result: tuple[str, str, bytes] = trio.run(record, Path(folder))
        return result


async def _resume_scenario(root: Path, damaged: bytes) -> None:
    agent, relative, original = _original()
    world = World(root)
    path = world.state / relative
    path.parent.mkdir(parents=True)
    path.write_bytes(damaged)
    present = set(damaged.split(b"\n"))
    intact = [
        _message_of(line)
        for line in original.split(b"\n")
        if line.startswith(b'{"record":"message"') and line in present
    ]
    try:
        loaded: Transcript | TranscriptError = load_transcript(path)
    except TranscriptError as error:
        loaded = error
    async with world.open(ScriptedProvider(_answer_newest)) as rt:
        refusal: TranscriptError | None = None
        try:
            await rt.resume(agent, "Third task.")
        except TranscriptError as error:
            refusal = error
        if refusal is not None:
            assert str(refusal).strip()
            assert isinstance(loaded, TranscriptError) or not loaded.messages
            assert path.read_bytes() == damaged  # a refused resume leaves the file alone
            return
        assert not isinstance(loaded, TranscriptError)
        await rt.wait([agent], timeout=60)
        conversation = list(rt.conversation(agent))
    _assert_in_order(intact, conversation)
    after = path.read_bytes()
    assert after.startswith(damaged)  # appended to, never rewritten
    reloaded = load_transcript(path)
    _assert_in_order(intact, [r.message for r in reloaded.messages])
    assert reloaded.conversation().last.text == "done: Third task."  # type: ignore[union-attr]


def _message_of(line: bytes) -> Message:
    return msgspec.json.decode(line, type=MessageRecord).message


def _assert_in_order(expected: list[Message], actual: list[Message]) -> None:
    """``expected`` is a subsequence of ``actual``."""
    rest = iter(actual)
    for message in expected:
        assert any(message == seen for seen in rest), f"lost or out of order: {message}"


@st.composite
def damaged_transcripts(draw: st.DrawFn) -> bytes:
    lines = _original()[2].split(b"\n")
    for how in draw(st.lists(transcript_fuzz.mutation, max_size=6)):
        transcript_fuzz._mutate(lines, how)
    data = b"\n".join(lines)
    cut = draw(st.none() | st.integers(min_value=0, max_value=len(data)))
    return data if cut is None else data[:cut]


@_settings(50)
@given(damaged=damaged_transcripts())
def test_resume_of_a_damaged_transcript_keeps_every_intact_message(damaged: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        _run(_resume_scenario, Path(folder), damaged)
