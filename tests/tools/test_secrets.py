"""Secrets: which variables hold one, the environment a child gets, and masking in tool results.

The end-to-end attack (a model running ``env`` in a real runtime, hooks
dumping their environment) is in ``tests/reliability/test_secrets.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from subagents.tools import (
    MIN_SECRET_CHARS,
    REDACTED,
    BashTool,
    SecretRedactor,
    ToolContext,
    ToolFlags,
    ToolRegistry,
    ToolResult,
    child_environment,
    is_secret_variable,
    secret_values,
)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ANTHROPIC_API_KEY", True),
        ("ANTHROPIC_AUTH_TOKEN", True),
        ("OPENAI_API_KEY", True),
        ("GEMINI_API_KEY", True),
        ("GITHUB_TOKEN", True),
        ("GH_TOKEN", True),
        ("NPM_TOKEN", True),
        ("AWS_ACCESS_KEY_ID", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("AWS_SESSION_TOKEN", True),
        ("AZURE_CLIENT_SECRET", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("DB_PASSWORD", True),
        ("PGPASSWORD", True),  # one word, so listed by name
        ("MYSQL_PWD", True),
        ("MY_SECRET_KEY", True),
        ("SSH_PRIVATE_KEY", True),
        ("GPG_PASSPHRASE", True),
        ("stripe_apikey", True),
        ("PATH", False),
        ("HOME", False),
        ("SSH_AUTH_SOCK", False),
        ("TOKENIZERS_PARALLELISM", False),
        ("KEYBOARD_LAYOUT", False),
        ("RAPI_KEYBOARD", False),
        ("SUBAGENTS_COMMAND_RUN", False),
    ],
)
def test_secret_variables(name: str, secret: bool) -> None:
    assert is_secret_variable(name) is secret


def test_a_child_environment_lacks_secrets_but_those_passed_through() -> None:
    env = {"PATH": "/bin", "GITHUB_TOKEN": "ghp_x", "OPENAI_API_KEY": "sk-x", "LANG": "C"}
    assert child_environment(env) == {"PATH": "/bin", "LANG": "C"}
    assert child_environment(env, {"GITHUB_TOKEN"}) == {
        "PATH": "/bin",
        "GITHUB_TOKEN": "ghp_x",
        "LANG": "C",
    }
    assert child_environment(env, {"github_token"}) == {"PATH": "/bin", "LANG": "C"}  # exact


def test_only_values_long_enough_are_masked() -> None:
    long_enough = "x" * MIN_SECRET_CHARS
    env = {"A_TOKEN": "1", "B_TOKEN": "short", "C_TOKEN": long_enough, "PATH": "/bin" * 9}
    assert secret_values(env) == ("x" * MIN_SECRET_CHARS,)
    redactor = SecretRedactor.from_environ(env)
    assert redactor.redact("1 short xxxxxxxx /bin") == f"1 short {REDACTED} /bin"
    assert not SecretRedactor.from_environ({"A_TOKEN": "1"})


def test_a_value_containing_another_is_masked_whole() -> None:
    redactor = SecretRedactor(("abcdefgh", "abcdefgh-and-more"))
    assert redactor.redact("abcdefgh-and-more abcdefgh") == f"{REDACTED} {REDACTED}"


SECRET = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=MIN_SECRET_CHARS)
TEXT = st.text(max_size=200)


@given(SECRET, TEXT, TEXT)
def test_a_masked_text_never_holds_the_secret(secret: str, before: str, after: str) -> None:
    redactor = SecretRedactor((secret,))
    assert secret not in redactor.redact(before + secret + after + secret)


@given(SECRET, TEXT, TEXT, st.data())
def test_a_cut_through_a_secret_shows_no_piece_of_it(
    secret: str, before: str, after: str, data: st.DataObject
) -> None:
    """Whatever side of a cut is kept, at most three characters of the secret show there."""
    text = before + secret + after
    at = len(before) + data.draw(st.integers(1, len(secret) - 1))
    redactor = SecretRedactor((secret,))
    head = redactor.redact(text[:at], cut_after=True)
    tail = redactor.redact(text[at:], cut_before=True)
    assert not any(head.endswith(secret[:n]) for n in range(4, len(secret)))
    assert not any(tail.startswith(secret[-n:]) for n in range(4, len(secret)))


# -- tool results --------------------------------------------------------------------------


class Echo(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    text: str


class EchoTool:
    """Says what it is told, as a result or as a failure."""

    name = "Echo"
    description = "Echo the text."
    arguments_type = Echo
    flags = ToolFlags(read_only=True)

    async def call(self, args: Echo, ctx: ToolContext, /) -> ToolResult:
        if args.text.startswith("fail "):
            raise RuntimeError(args.text)
        return ToolResult.ok(args.text)


async def test_every_tool_result_is_masked_before_it_is_returned(tmp_path: Path) -> None:
    secret = "value-of-a-secret-42"
    ctx = ToolContext("a", 1, tmp_path, redactor=SecretRedactor((secret,)))
    registry = ToolRegistry([EchoTool()])
    said = await registry.call("Echo", {"text": f"it is {secret}!"}, ctx)
    assert said.content == f"it is {REDACTED}!"
    assert said.details["redacted"] is True
    failed = await registry.call("Echo", {"text": f"fail {secret}"}, ctx)
    assert failed.is_error
    assert secret not in failed.content


async def test_a_context_masks_the_process_secrets_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-default-context-1")
    said = await ToolRegistry([EchoTool()]).call(
        "Echo", {"text": "tok-default-context-1"}, ToolContext("a", 1, tmp_path)
    )
    assert said.content == REDACTED


# -- Bash ------------------------------------------------------------------------------------

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="runs bash")


@linux
async def test_bash_runs_without_secret_variables_unless_passed_through(
    make_ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_bash_unit_0123456789")
    ctx = make_ctx()
    command = {"command": 'echo "${GITHUB_TOKEN-unset} ${PATH:+path}"'}
    scrubbed = await ToolRegistry([BashTool()]).call("Bash", command, ctx)
    assert scrubbed.content == "unset path"
    passed = await ToolRegistry([BashTool(env_passthrough={"GITHUB_TOKEN"})]).call(
        "Bash", command, ctx
    )
    assert passed.content == f"{REDACTED} path"
    # A given environment is scrubbed too.
    given_env = BashTool(env={"PATH": os.environ["PATH"], "X_PASSWORD": "given-password"})
    own = await ToolRegistry([given_env]).call("Bash", {"command": "echo ${X_PASSWORD-unset}"}, ctx)
    assert own.content == "unset"


@linux
async def test_bash_masks_a_secret_its_output_cut_went_through(make_ctx: Any) -> None:
    secret = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    base = make_ctx()
    ctx = ToolContext(
        base.agent_id, 1, base.workspace_root, approver=base.approver,
        redactor=SecretRedactor((secret,)),
    )  # fmt: skip
    # 50 bytes kept at each end; the secret straddles both cuts.
    command = f"printf '%040d{secret}%0100d{secret}%040d' 0 0 0"
    result = await ToolRegistry([BashTool(output_cap_bytes=100)]).call(
        "Bash", {"command": command}, ctx
    )
    assert result.details["truncated"] is True
    head, tail = result.content.split("bytes of output omitted]")
    assert head.startswith("0" * 40 + REDACTED)
    assert tail.lstrip(". \n").startswith(REDACTED + "0" * 40)
    assert "ABCD" not in result.content
    assert "WXYZ" not in result.content


def test_the_bash_description_says_what_is_and_is_not_guaranteed() -> None:
    text = BashTool().description
    guaranteed, not_guaranteed = text.split("Not guaranteed:")
    for promise in ("background, nohup and setsid", "ends, times out or the agent stops"):
        assert promise in guaranteed
    for limit in ("not a sandbox", "runs as the user", "to the network", "(env -i) escapes"):
        assert limit in not_guaranteed
    assert "Secret environment variables" in not_guaranteed
