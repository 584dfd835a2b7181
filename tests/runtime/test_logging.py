"""Runtime logging: JSON lines with agent fields, stderr levels, secrets masked, never a crash."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

import subagents.tools._secrets as secrets_module
from subagents.runtime._config.values import LoggingConfig, RuntimeConfig
from subagents.runtime._logging import (
    REDACTED,
    RuntimeLog,
    is_secret_key,
    mask_text,
    open_log,
    redact,
)

API_KEY = "sk-ant-api03-" + "Zq9" * 20
PLAIN_KEY = "plain-secret-0123456789"  # an API key without the sk-ant- shape
BEARER = "eyJhbGciOiJIUzI1NiJ9.payload.signature"


def config_for(tmp_path: Path, **logging: Any) -> RuntimeConfig:
    return RuntimeConfig(state_dir=tmp_path / "state", logging=LoggingConfig(**logging))


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_json_lines_carry_the_agent_fields(tmp_path: Path) -> None:
    err = io.StringIO()
    with open_log(config_for(tmp_path), "s-1", stderr=err, env={}) as log:
        assert log.path == tmp_path / "state" / "logs" / "s-1.jsonl"
        agent = log.for_agent(agent_id="a1", nickname="Ada", depth=1)
        agent.info("turn started", turn=3)
        agent.bind(tool="Read").info("tool call")
        log.logger().info("runtime opened")
        agent.debug("below the file level")
    first, second, third = lines_of(tmp_path / "state" / "logs" / "s-1.jsonl")
    assert list(first)[:3] == ["timestamp", "level", "event"]
    assert first["event"] == "turn started"
    assert first["level"] == "info"
    assert (first["agent_id"], first["nickname"], first["depth"]) == ("a1", "Ada", 1)
    assert first["session_id"] == "s-1"
    assert first["turn"] == 3
    assert second["tool"] == "Read"
    assert second["nickname"] == "Ada"
    assert (third["agent_id"], third["nickname"], third["depth"]) == (None, None, None)
    assert err.getvalue() == ""  # nothing at warning or above
    assert log.statistics().file_lines == 3


def test_file_lines_are_ascii_whatever_they_hold(tmp_path: Path) -> None:
    """A value with a right-to-left override, a line separator or an emoji is written
    escaped (no character can reorder what a terminal shows of the file); a value JSON
    cannot hold is written as its text; every line reads back as it was logged."""
    config = config_for(tmp_path)
    path = config.logs_dir / "s.jsonl"
    tricky = "file\u202etxt.exe \u2028 \U0001f600 caf\u00e9"
    with open_log(config, "s", stderr=io.StringIO(), env={}) as log:
        logger = log.logger()
        logger.info("plain", n=1, ratio=0.5, ok=True, none=None, items=["a", 2])
        logger.info("tricky", value=tricky)
        logger.info("object", where=Path("/tmp/x"), big=1 << 70)
    raw = path.read_bytes()
    assert raw.isascii()
    plain, odd, objects = lines_of(path)
    assert (plain["n"], plain["ratio"], plain["ok"], plain["none"]) == (1, 0.5, True, None)
    assert plain["items"] == ["a", 2]
    assert odd["value"] == tricky
    assert b"\\u202e" in raw
    assert (objects["where"], objects["big"]) == ("/tmp/x", 1 << 70)


def test_lines_are_appended_and_flushed_one_by_one(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    path = config.logs_dir / "s.jsonl"
    with open_log(config, "s", stderr=io.StringIO(), env={}) as log:
        logger = log.logger()
        for n in range(3):
            logger.info("line", n=n)
            assert len(lines_of(path)) == n + 1  # on disk before the next call
    with open_log(config, "s", stderr=io.StringIO(), env={}) as log:
        log.logger().warning("again")
    assert [line.get("n") for line in lines_of(path)] == [0, 1, 2, None]
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("level", "shown"),
    [
        ("warning", ["warn", "error"]),
        ("info", ["info", "warn", "error"]),
        ("debug", ["debug", "info", "warn", "error"]),
        ("error", ["error"]),
    ],
)
def test_stderr_shows_lines_at_its_level(tmp_path: Path, level: str, shown: list[str]) -> None:
    err = io.StringIO()
    with open_log(config_for(tmp_path, stderr_level=level), "s", stderr=err, env={}) as log:
        agent = log.for_agent(agent_id="a7", nickname="Grace", depth=0)
        agent.debug("debug")
        agent.info("info", turn=2)
        agent.warning("warn")
        agent.error("error", why="a reason")
    printed = [line.split()[4] for line in err.getvalue().splitlines()]
    assert printed == shown
    if "info" in shown:
        assert "[Grace d0] info turn=2" in err.getvalue()
    assert 'why="a reason"' in err.getvalue()
    # The file keeps its own level (info) whatever stderr's is.
    events = [line["event"] for line in lines_of(tmp_path / "state" / "logs" / "s.jsonl")]
    assert events == ["info", "warn", "error"]


def test_file_level_and_no_file(tmp_path: Path) -> None:
    with open_log(
        config_for(tmp_path, file_level="debug"), "d", stderr=io.StringIO(), env={}
    ) as log:
        log.logger().debug("kept")
    assert lines_of(tmp_path / "state" / "logs" / "d.jsonl")[0]["event"] == "kept"
    err = io.StringIO()
    with open_log(config_for(tmp_path, json_file=False), "n", stderr=err, env={}) as log:
        assert log.path is None
        log.logger().warning("only on stderr")
    assert not (tmp_path / "state" / "logs" / "n.jsonl").exists()
    assert "only on stderr" in err.getvalue()


def test_global_structlog_configuration_is_left_alone(tmp_path: Path) -> None:
    before = structlog.get_config()
    was_configured = structlog.is_configured()
    with open_log(config_for(tmp_path), "g", stderr=io.StringIO(), env={}) as log:
        log.logger().info("hello")
    assert structlog.get_config() == before
    assert structlog.is_configured() == was_configured


def test_secrets_never_reach_the_file_or_stderr(tmp_path: Path) -> None:
    err = io.StringIO()
    env = {"ANTHROPIC_API_KEY": PLAIN_KEY}
    config = config_for(tmp_path, stderr_level="debug", file_level="debug")

    class Client:
        def __repr__(self) -> str:
            return f"Client(api_key={PLAIN_KEY!r})"

    with open_log(config, "secret", stderr=err, env=env) as log:
        agent = log.for_agent(agent_id="a1", nickname="Ada", depth=1)
        agent.info(
            "request",
            headers={"Authorization": f"Bearer {BEARER}", "X-Api-Key": API_KEY, "accept": "json"},
            api_key=API_KEY,
            password="hunter22",
            usage={"input_tokens": 12, "output_tokens": 3},
        )
        agent.info(f"calling with {API_KEY}", items=[{"nested": [f"key={PLAIN_KEY}"]}])
        agent.debug("headers as text", text=f"authorization: Bearer {BEARER}\nx-api-key: {API_KEY}")
        agent.warning("client", client=Client(), raw=PLAIN_KEY.encode())
        try:
            raise RuntimeError(f"401 for key {PLAIN_KEY} with Authorization: Bearer {BEARER}")
        except RuntimeError:
            agent.exception("request failed")
    written = (tmp_path / "state" / "logs" / "secret.jsonl").read_text() + err.getvalue()
    for secret in (API_KEY, PLAIN_KEY, BEARER, "hunter22", "Zq9Zq9"):
        assert secret not in written
    first = lines_of(tmp_path / "state" / "logs" / "secret.jsonl")[0]
    assert first["headers"] == {"Authorization": REDACTED, "X-Api-Key": REDACTED, "accept": "json"}
    assert first["api_key"] == REDACTED
    assert first["usage"] == {"input_tokens": 12, "output_tokens": 3}  # counts are not secrets
    assert "RuntimeError" in written
    assert "request failed" in err.getvalue()


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True),
        ("apiKey", True),
        ("x-api-key", True),
        ("X-Api-Key", True),
        ("Authorization", True),
        ("proxy_authorization", True),
        ("access_token", True),
        ("refresh-token", True),
        ("client_secret", True),
        ("password", True),
        ("cookie", True),
        ("private_key", True),
        ("input_tokens", False),
        ("max_tokens", False),
        ("author", False),
        ("tool_use_id", False),
        ("session_id", False),
    ],
)
def test_secret_keys(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


def test_mask_text() -> None:
    assert mask_text(f"key {API_KEY}.") == f"key {REDACTED}."
    assert mask_text(f"Authorization: Bearer {BEARER}") == f"Authorization: Bearer {REDACTED}"
    assert mask_text(f"{{'x-api-key': '{PLAIN_KEY}'}}") == f"{{'x-api-key': '{REDACTED}'}}"
    assert mask_text(f"?token={PLAIN_KEY}&a=1") == f"?token={REDACTED}&a=1"
    assert mask_text("max_tokens=5 input_tokens: 7") == "max_tokens=5 input_tokens: 7"
    assert mask_text(f"access_token={PLAIN_KEY}&a=1") == f"access_token={REDACTED}&a=1"
    assert mask_text(f"value {PLAIN_KEY}", [PLAIN_KEY]) == f"value {REDACTED}"
    assert mask_text("short", ["short"]) == "short"  # too short to mask by value
    assert mask_text("nothing to hide, 42 tokens") == "nothing to hide, 42 tokens"


def _mask_every_pattern(text: str) -> str:
    """What ``mask_text`` did before it looked for what each pattern needs: every scan run."""
    text = secrets_module._ANTHROPIC_KEY.sub(REDACTED, text)
    text = secrets_module._GENERIC_KEY.sub(REDACTED, text)
    text = secrets_module._BEARER.sub(lambda m: f"{m[1]} {REDACTED}", text)
    return secrets_module._SECRET_PAIR.sub(lambda m: m[1] + REDACTED, text)


# Text made of the patterns' own pieces, in any case, among letters from all of Unicode:
# the prechecks of mask_text must never skip a scan that would have masked something.
_PIECES = st.sampled_from(
    [
        "Bearer ",
        "bEaReR\t",
        "token",
        "Token",
        "api-key",
        "X-API-KEY",
        "password",
        "secret",
        "access_token",
        ":",
        "=",
        " = ",
        "'",
        '"',
        "sk-",
        "sk-ant-",
        "Zq9" * 8,
        "abc.def/ghi",
        "\u212a",
        "\u0130",
        "\u017f",
        " ",
        "&",
        ";",
    ]
)
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12).map("".join)


@given(_TEXTS)
def test_mask_text_skips_only_the_scans_that_cannot_match(text: str) -> None:
    assert mask_text(text) == _mask_every_pattern(text)


def test_redact_copies_plain_data_and_masks_objects() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise ValueError("no repr")

    cyclic: list[Any] = []
    cyclic.append(cyclic)
    value = {
        "a": (1, 2.5, None, True),
        "s": {PLAIN_KEY},
        "p": Path("/x"),
        "o": Broken(),
        "c": cyclic,
        3: "int key",
    }
    out = redact(value, env={"ANTHROPIC_AUTH_TOKEN": PLAIN_KEY})
    assert out["a"] == [1, 2.5, None, True]
    assert out["s"] == [REDACTED]
    assert out["p"] == "/x"
    assert "unrepresentable" in out["o"]
    assert out["3"] == "int key"
    json.dumps(out)  # plain JSON data, however deep the cycle


def test_an_unwritable_log_folder_degrades_to_stderr(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file where the folder should be")
    err = io.StringIO()
    with open_log(config_for(tmp_path), "s", stderr=err, env={}) as log:
        log.logger().warning("first")
        log.logger().warning("second")
        stats = log.statistics()
    text = err.getvalue()
    assert text.count("cannot write the log file") == 1
    assert "logging continues on stderr only" in text
    assert "first" in text
    assert "second" in text
    assert stats.file_lines == 0
    assert not stats.file_active
    assert stats.file_error


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_reported_once(tmp_path: Path) -> None:
    logs = tmp_path / "state" / "logs"
    logs.mkdir(parents=True)
    (logs / "full.jsonl").symlink_to("/dev/full")
    err = io.StringIO()
    with open_log(config_for(tmp_path), "full", stderr=err, env={}) as log:
        for n in range(3):
            log.logger().warning("line", n=n)
        assert not log.statistics().file_active
    text = err.getvalue()
    assert text.count("cannot write the log file") == 1
    assert "No space left on device" in text
    assert text.count("line n=") == 3


def test_a_deleted_log_folder_is_reported_once(tmp_path: Path) -> None:
    err = io.StringIO()
    with open_log(config_for(tmp_path), "gone", stderr=err, env={}) as log:
        log.logger().info("before")
        shutil.rmtree(tmp_path / "state")
        log.logger().info("after")
        log.logger().warning("still here")
        stats = log.statistics()
    assert stats.file_lines == 1
    assert not stats.file_active
    assert err.getvalue().count("cannot write the log file") == 1
    assert "still here" in err.getvalue()


def test_a_broken_stderr_never_raises(tmp_path: Path) -> None:
    err = io.StringIO()
    err.close()
    (tmp_path / "state").write_text("not a folder")
    with open_log(config_for(tmp_path), "s", stderr=err, env={}) as log:
        log.logger().error("nowhere to go")


def test_after_close_lines_go_to_stderr_only(tmp_path: Path) -> None:
    err = io.StringIO()
    log = open_log(config_for(tmp_path), "c", stderr=err, env={})
    logger = log.logger()
    logger.warning("open")
    log.close()
    log.close()
    logger.warning("closed")
    assert [line["event"] for line in lines_of(tmp_path / "state" / "logs" / "c.jsonl")] == ["open"]
    assert "closed" in err.getvalue()
    assert "cannot write" not in err.getvalue()


def test_session_ids_cannot_leave_the_logs_folder(tmp_path: Path) -> None:
    with open_log(config_for(tmp_path), "../../escape/..", stderr=io.StringIO(), env={}) as log:
        assert log.path is not None
        assert log.path.parent == tmp_path / "state" / "logs"
        log.logger().info("inside")
    assert log.path.exists()


def test_unknown_levels_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        RuntimeLog(path=None, stderr_level="loud")


def test_stderr_lines_show_controls_as_signs(tmp_path: Path) -> None:
    # Hook output and file names reach the log: on stderr they must not act on the terminal.
    err = io.StringIO()
    hostile = "out\x1b]52;c;cHduZWQ=\x07\u202e\x9b6n"
    with open_log(config_for(tmp_path), "t", stderr=err, env={}) as log:
        log.for_agent(agent_id="a1", nickname="Ada\x1b[2J", depth=0).warning(
            "hook failed", output=hostile
        )
    text = err.getvalue()
    assert not any(c in text for c in "\x1b\x07\u202e\x9b")
    assert "[Ada␛[2J d0] hook failed" in text
    assert "out␛]52;c;cHduZWQ=␇⟨U+202E⟩⟨U+009B⟩6n" in text
    assert lines_of(tmp_path / "state" / "logs" / "t.jsonl")[0]["output"] == hostile


def test_a_repeated_line_is_masked_from_memory_and_a_new_secret_is_still_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: a line's keys and short values are masked once per set of secrets, not per line.

    The secrets are still the environment's current ones: a secret variable set
    after the first line is masked in the next.
    """
    import subagents.runtime._logging as logging_module

    calls = 0
    real = logging_module.mask_text

    def counting(text: str, secrets: Iterable[str] = ()) -> str:
        nonlocal calls
        calls += 1
        return real(text, secrets)

    monkeypatch.setattr(logging_module, "mask_text", counting)
    env: dict[str, str] = {}
    path = tmp_path / "log.jsonl"
    with RuntimeLog(path=path, env=env) as log:
        logger = log.for_agent(agent_id="a1", nickname="Ada", depth=1)
        logger.info("status changed", status="running", message=None)
        first = calls
        for _ in range(20):
            logger.info("status changed", status="running", message=None)
        assert calls == first  # every key and value was masked before
        env["MY_SERVICE_TOKEN"] = "tok-" + "z" * 20
        logger.info("status changed", status="tok-" + "z" * 20, message=None)
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["status"] == REDACTED
    assert last["nickname"] == "Ada"
    assert "timestamp" in last


def test_lines_logged_under_os_environ_do_not_read_it_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: a runtime's default environment is ``os.environ``; reading it whole for
    every line (to see whether a secret was set) cost about 15 us a line, more in a Ray
    worker's larger environment. It is compared as its own dict instead, and a secret
    variable set between two lines is still masked in the second."""
    import os

    iterated = 0
    real_iter = type(os.environ).__iter__

    def counting_iter(self: Any) -> Any:
        nonlocal iterated
        iterated += 1
        return real_iter(self)

    name = "SUBAGENTS_TEST_LOG_TOKEN"
    monkeypatch.delenv(name, raising=False)
    path = tmp_path / "log.jsonl"
    with RuntimeLog(path=path, env=os.environ) as log:
        logger = log.for_agent(agent_id="a1", nickname="Ada", depth=1)
        logger.info("status changed", status="running")
        monkeypatch.setattr(type(os.environ), "__iter__", counting_iter)
        for _ in range(20):
            logger.info("status changed", status="running")
        assert iterated == 0
        monkeypatch.setenv(name, "tok-" + "w" * 20)
        logger.info("status changed", status="tok-" + "w" * 20)
        assert iterated == 1  # the changed environment was read again, once
        logger.info("status changed", status="tok-" + "w" * 20)
        assert iterated == 1
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["status"] for line in lines[-2:]] == [REDACTED, REDACTED]
    assert lines[0]["status"] == "running"


def test_a_repeated_line_reads_its_masks_without_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17, third round: the keys and short values of a line seen before are read from
    the masks' memory in place, not through a call each (a line is a dozen of them); the line
    written is the one :func:`redact` gives, secret keys still redacted."""
    import subagents.runtime._logging as logging_module

    looked: list[str] = []
    masks = logging_module._Masks
    real_key, real_text = masks.key, masks.text

    def key(self: Any, name: str) -> tuple[str, bool]:
        looked.append(name)
        return real_key(self, name)

    def text(self: Any, value: str) -> str:
        looked.append(value)
        return real_text(self, value)

    monkeypatch.setattr(masks, "key", key)
    monkeypatch.setattr(masks, "text", text)
    path = tmp_path / "log.jsonl"
    with RuntimeLog(path=path, env={"API_TOKEN": "sekrit-" + "q" * 12}) as log:
        logger = log.for_agent(agent_id="a1", nickname="Ada", depth=1)
        logger.info("agent spawned", model="m", api_key="k", note="sekrit-" + "q" * 12)
        first = len(looked)
        assert first > 0
        for _ in range(5):
            logger.info("agent spawned", model="m", api_key="k", note="sekrit-" + "q" * 12)
        assert len(looked) == first
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 6
    for line in lines:
        assert (line["api_key"], line["note"], line["model"]) == (REDACTED, REDACTED, "m")
        assert {k: v for k, v in line.items() if k != "timestamp"} == {
            k: v for k, v in lines[0].items() if k != "timestamp"
        }


@pytest.mark.parametrize(
    ("file_level", "stderr_level", "path", "enabled"),
    [
        ("info", "warning", True, {"info", "warning", "error"}),
        ("warning", "debug", True, {"debug", "info", "warning", "error"}),
        ("debug", "error", False, {"error"}),  # no file: only stderr's level counts
    ],
)
def test_enabled_says_whether_a_level_is_written_anywhere(
    tmp_path: Path, file_level: str, stderr_level: str, path: bool, enabled: set[str]
) -> None:
    log = RuntimeLog(
        path=tmp_path / "log.jsonl" if path else None,
        file_level=file_level,
        stderr_level=stderr_level,
        stderr=io.StringIO(),
    )
    with log:
        assert {level for level in ("debug", "info", "warning", "error") if log.enabled(level)} == (
            enabled
        )
        assert log.enabled("warn") == ("warning" in enabled)  # the aliases too


def test_the_level_and_time_are_the_runtimes_and_fatal_is_critical(tmp_path: Path) -> None:
    """A caller's own ``level`` or ``timestamp`` cannot forge a line's; ``warn``,
    ``exception`` and ``fatal`` are written as the levels they are; every time is
    ISO 8601 UTC with microseconds."""
    err = io.StringIO()
    with open_log(config_for(tmp_path), "s-1", stderr=err, env={}) as log:
        agent = log.for_agent(agent_id="a1", nickname="Ada", depth=1)
        agent.info("forged", level="debug", timestamp="1970-01-01T00:00:00Z")
        agent.warn("warned")
        agent.fatal("fatal")
        try:
            raise ValueError("boom")
        except ValueError:
            agent.exception("failed")
    forged, warned, fatal, failed = lines_of(tmp_path / "state" / "logs" / "s-1.jsonl")
    assert forged["level"] == "info"
    assert forged["timestamp"] != "1970-01-01T00:00:00Z"
    assert [warned["level"], fatal["level"], failed["level"]] == ["warning", "critical", "error"]
    assert "ValueError: boom" in failed["exception"]
    for line in (forged, warned, fatal, failed):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", line["timestamp"])
    assert "critical" in err.getvalue()
    assert "fatal" in err.getvalue()


def test_agents_of_one_type_share_their_logger_until_they_have_an_id(tmp_path: Path) -> None:
    with open_log(config_for(tmp_path), "s-1", stderr=io.StringIO(), env={}) as log:
        explore = log.for_type("Explore")
        assert log.for_type("Explore") is explore
        assert log.for_type("Plan") is not explore
        explore.info("team not resumed")
    (line,) = lines_of(tmp_path / "state" / "logs" / "s-1.jsonl")
    assert (line["agent_type"], line["agent_id"], line["session_id"]) == ("Explore", None, "s-1")


def test_the_clock_formats_each_second_once_and_every_stamp_in_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ISO 8601, UTC, six digits of microseconds, the date of the second the stamp is in
    (the clock keeps one second's text: a new second must not reuse the last one's)."""
    from subagents.runtime import _logging

    clock = _logging._Clock()
    for stamp, expected in [
        (0.0, "1970-01-01T00:00:00.000000Z"),
        (86_400.25, "1970-01-02T00:00:00.250000Z"),
        (86_400.5, "1970-01-02T00:00:00.500000Z"),
        (1_000.0 + (1 - 2**-36), "1970-01-01T00:16:40.999999Z"),
    ]:
        monkeypatch.setattr(_logging.time, "time", lambda stamp=stamp: stamp)
        assert clock.now() == expected


def test_a_short_write_is_finished_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write the OS cuts short (a signal, a nearly full disk) is carried on from where
    it stopped: the line is whole in the file, once."""
    import subagents.runtime._logging as logging_module

    real_write = os.write
    cuts: list[int] = []

    def short_write(fd: int, data: Any) -> int:
        if len(data) > 20:
            cuts.append(len(data))
            return real_write(fd, bytes(data[:7]))
        return real_write(fd, data)

    with open_log(config_for(tmp_path), "s-1", stderr=io.StringIO(), env={}) as log:
        monkeypatch.setattr(logging_module.os, "write", short_write)
        log.for_agent(agent_id="a1", nickname="Ada", depth=0).info("agent spawned", note="x" * 50)
        monkeypatch.undo()
    assert cuts  # the write was cut, more than once
    [line] = lines_of(tmp_path / "state" / "logs" / "s-1.jsonl")
    assert (line["event"], line["note"]) == ("agent spawned", "x" * 50)


def test_every_level_and_form_of_a_call_gives_the_same_line(tmp_path: Path) -> None:
    """Issue 17, twelfth round: the runtime's loggers hand a line straight to the sink.
    Every method, ``log()``, %-interpolation, bound context and an exception still make
    the line structlog's chain made: the three first keys, the level's name, the text."""
    err = io.StringIO()
    with open_log(config_for(tmp_path, file_level="debug"), "s-1", stderr=err, env={}) as log:
        agent = log.for_agent(agent_id="a1", nickname="Ada", depth=2).bind(tool="Read")
        agent.debug("d")
        agent.info("i %s of %d", "turn", 3)
        agent.warning("w")
        agent.warn("w2")
        agent.error("e")
        agent.critical("c")
        agent.log(20, "via log", n=1)
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            agent.exception("failed")
        agent.msg("m %(what)s", {"what": "named"})
        agent.info("100%% %s", "done")
        assert agent.is_enabled_for(10)
    lines = lines_of(tmp_path / "state" / "logs" / "s-1.jsonl")
    assert [(line["level"], line["event"]) for line in lines] == [
        ("debug", "d"),
        ("info", "i turn of 3"),
        ("warning", "w"),
        ("warning", "w2"),
        ("error", "e"),
        ("critical", "c"),
        ("info", "via log"),
        ("error", "failed"),
        ("info", "m named"),
        ("info", "100% done"),
    ]
    for line in lines:
        assert list(line)[:3] == ["timestamp", "level", "event"]
        assert (line["agent_id"], line["nickname"], line["depth"], line["tool"]) == (
            "a1",
            "Ada",
            2,
            "Read",
        )
    assert "RuntimeError: boom" in lines[-3]["exception"]
    assert "exc_info" not in lines[-3]
    # stderr (warning and up): the same lines, readable
    assert [row.split()[1] for row in err.getvalue().splitlines() if row[:1].isdigit()] == [
        "warning",
        "warning",
        "error",
        "critical",
        "error",
    ]


def test_lists_of_names_are_masked_item_by_item(tmp_path: Path) -> None:
    """Issue 17, fourteenth round: a list of strings (an agent's tools) is masked from
    the masks' memory in one loop; a list holding anything else is redacted item by item."""
    key = "sk-ant-api03-" + "k" * 40
    with RuntimeLog(path=tmp_path / "log.jsonl", env={}) as log:
        agent = log.for_agent(agent_id="a1", nickname="Ada", depth=1)
        for _ in range(2):  # the second line reads every item's mask from memory
            agent.info("agent spawned", tools=["Read", key], inputs=("Read", 3, {"token": "t"}))
    for line in lines_of(tmp_path / "log.jsonl"):
        assert line["tools"] == ["Read", REDACTED]
        assert line["inputs"] == ["Read", 3, {"token": REDACTED}]


# --------------------------------------------------------------------------- once a pass


class _Pass:
    """A stand-in for the runtime's flusher: takes what wants a flush at the end of the
    pass, and flushes it when told (``running`` False: it declines, as a stopped one does)."""

    def __init__(self) -> None:
        self.running = True
        self.pending: list[Any] = []

    def want(self, flushable: Any) -> bool:
        if not self.running:
            return False
        self.pending.append(flushable)
        return True

    def end(self) -> None:
        pending, self.pending = self.pending, []
        for flushable in pending:
            flushable.flush()


@contextlib.contextmanager
def _batched(
    tmp_path: Path, session: str, stderr: io.StringIO | None = None
) -> Iterator[tuple[RuntimeLog, _Pass, Path]]:
    """A session's log whose file lines wait for a :class:`_Pass`'s end, and its file."""
    flusher = _Pass()
    err = io.StringIO() if stderr is None else stderr
    with open_log(config_for(tmp_path), session, stderr=err, env={}) as log:
        log.batch_with(flusher.want)
        yield log, flusher, tmp_path / "state" / "logs" / f"{session}.jsonl"


def _counting_writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    import subagents.runtime._logging as logging_module

    real = logging_module._write_all
    writes: list[bytes] = []

    def counted(fd: int, data: bytes) -> None:
        writes.append(data)
        real(fd, data)

    monkeypatch.setattr(logging_module, "_write_all", counted)
    return writes


def test_a_passs_lines_are_written_at_its_end_in_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = _counting_writes(monkeypatch)
    with _batched(tmp_path, "p") as (log, flusher, path):
        for n in range(3):
            log.logger().info("line", n=n)
        assert not path.read_bytes()  # held for the end of the pass
        assert len(flusher.pending) == 1  # one flush asked for, not one a line
        flusher.end()
        assert [line["n"] for line in lines_of(path)] == [0, 1, 2]
        assert len(writes) == 1
        log.logger().info("next pass")
        assert log.statistics().file_lines == 4  # what it counts is what the file holds
        assert [line["event"] for line in lines_of(path)][-1] == "next pass"
        log.logger().info("at the close")
    assert [line["event"] for line in lines_of(path)][-1] == "at the close"


def test_lines_are_written_at_once_when_no_pass_will_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = _counting_writes(monkeypatch)
    with _batched(tmp_path, "q") as (log, flusher, path):
        log.logger().info("held")
        flusher.running = False  # the flusher stops: it flushes what it was asked to
        flusher.end()
        log.logger().info("at once")
        assert [line["event"] for line in lines_of(path)] == ["held", "at once"]
        log.batch_with(None)
        log.logger().info("unbatched")
        assert [line["event"] for line in lines_of(path)][-1] == "unbatched"
    assert len(writes) == 3


def test_another_threads_line_is_written_at_once_after_the_held_ones(tmp_path: Path) -> None:
    import threading

    with _batched(tmp_path, "t") as (log, flusher, path):
        log.logger().info("held here")
        worker = threading.Thread(target=lambda: log.logger().info("from a worker"))
        worker.start()
        worker.join(timeout=30)
        assert [line["event"] for line in lines_of(path)] == ["held here", "from a worker"]
        flusher.end()


def test_a_pass_that_logs_much_writes_before_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subagents.runtime._logging as logging_module

    writes = _counting_writes(monkeypatch)
    with _batched(tmp_path, "m") as (log, flusher, path):
        count = 0
        while not writes:  # held up to the bound, then written, in order
            log.logger().info("line", n=count, pad="p" * 1000)
            count += 1
        assert sum(len(data) for data in writes) <= logging_module._HELD_BYTES + 2000
        assert [line["n"] for line in lines_of(path)] == list(range(count))
        flusher.end()


def test_a_log_deleted_under_a_held_pass_is_reported_once(tmp_path: Path) -> None:
    err = io.StringIO()
    with _batched(tmp_path, "d", err) as (log, flusher, _):
        log.logger().info("lost with the file")
        shutil.rmtree(tmp_path / "state")
        flusher.end()  # one write, then one fstat: the file is gone
        log.logger().warning("still here")
        stats = log.statistics()
    assert stats.file_lines == 0
    assert not stats.file_active
    assert err.getvalue().count("cannot write the log file") == 1
    assert "still here" in err.getvalue()


async def test_the_runtimes_lines_of_a_pass_go_out_in_one_write_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trio
    import trio.testing

    from subagents.runtime import ScriptedProvider
    from tests.runtime.world import World

    world = World(tmp_path)
    async with world.open(ScriptedProvider([])) as rt:
        await trio.testing.wait_all_tasks_blocked()  # the opening's lines written
        writes = _counting_writes(monkeypatch)
        path = rt.services.log.path
        assert path is not None
        before = len(lines_of(path))
        logger = rt.services.log.logger()
        for n in range(5):
            logger.info("in one pass", n=n)
        assert len(lines_of(path)) == before  # not yet: the pass has not ended
        await trio.testing.wait_all_tasks_blocked()
        assert [line.get("n") for line in lines_of(path)[before:]] == [0, 1, 2, 3, 4]
        assert len(writes) == 1
        logger.info("held at the close")
    events = [line["event"] for line in lines_of(path)]
    assert events[-2:] == ["held at the close", "runtime closed"]


def test_an_interrupted_write_keeps_the_held_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held pass is let go only once it is written: a Ctrl-C in its write loses nothing."""
    import subagents.runtime._logging as logging_module

    real = logging_module._write_all
    calls: list[int] = []

    def interrupted_once(fd: int, data: bytes) -> None:
        calls.append(len(data))
        if len(calls) == 1:
            raise KeyboardInterrupt
        real(fd, data)

    with _batched(tmp_path, "k") as (log, flusher, path):
        log.logger().info("first")
        log.logger().info("second")
        monkeypatch.setattr(logging_module, "_write_all", interrupted_once)
        with pytest.raises(KeyboardInterrupt):
            flusher.end()
        flusher.end()  # nothing asked for now: the close writes them
    assert [line["event"] for line in lines_of(path)] == ["first", "second"]
    assert len(calls) == 2


_LINE_KEYS = st.one_of(
    st.sampled_from(
        [
            "event",
            "level",
            "timestamp",
            "agent_id",
            "nickname",
            "depth",
            "model",
            "api_key",
            "password",
            "Authorization",
            "tool_use_id",
            "note",
            PLAIN_KEY,
            f"x{PLAIN_KEY}y",
        ]
    ),
    st.text(max_size=8),
)
_LINE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from(["", PLAIN_KEY, f"key {API_KEY}", f"Bearer {BEARER}", "token=abc"]),
    _TEXTS,
    st.lists(st.one_of(_TEXTS, st.integers()), max_size=3),
    st.dictionaries(st.sampled_from(["token", "name", PLAIN_KEY]), _TEXTS, max_size=2),
    st.builds(Path, st.sampled_from(["/tmp/a", f"/tmp/{PLAIN_KEY}"])),
)


@given(
    lines=st.lists(st.dictionaries(_LINE_KEYS, _LINE_VALUES, max_size=8), min_size=1, max_size=6),
    method=st.sampled_from(["debug", "info", "warning", "warn", "error", "critical"]),
    secret_changes=st.booleans(),
)
def test_a_finished_line_is_what_redact_gives_however_often_it_comes(
    lines: list[dict[str, Any]], method: str, secret_changes: bool
) -> None:
    """Issue 17: a line's fast finish (its keys' and short values' masks remembered, one
    pass over its fields) gives exactly :func:`redact`'s copy of its fields, in order after
    ``timestamp``, ``level`` and ``event``, with the agent keys it lacks as ``null``;
    twice over (the second time from what the masks remember), and after the secrets
    change."""
    import subagents.runtime._logging as logging_module

    env = {"ANTHROPIC_API_KEY": PLAIN_KEY}
    finish = logging_module._Finish(env)
    for round_ in range(3):
        if round_ == 2 and secret_changes:
            env["ANTHROPIC_API_KEY"] = "another-secret-" + "k" * 12
        for fields in lines:
            line = finish.line(method, dict(fields))
            expected = redact(fields, env=env)
            expected.pop("level", None)
            expected.pop("timestamp", None)
            for name in ("agent_id", "nickname", "depth"):
                if name not in fields:
                    expected[name] = None
            head = ["timestamp", "level"] + (["event"] if "event" in fields else [])
            assert list(line)[: len(head)] == head
            assert line["level"] == {"warn": "warning"}.get(method, method)
            assert {k: v for k, v in line.items() if k not in ("timestamp", "level")} == expected
            assert [k for k in line if k not in head] == [k for k in expected if k not in head]
