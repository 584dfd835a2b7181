"""Model resolution: env > spawn > definition > parent > default, through the alias table."""

from __future__ import annotations

import pytest

from subagents.agents import ModelAliases
from subagents.runtime import DEFAULT_MODEL, ModelChoice, resolve_model
from subagents.runtime._config.defaults import MODEL_ENV
from subagents.runtime._model import ModelChoices
from tests.runtime.helpers import definition

SONNET = ModelAliases().table["sonnet"]
HAIKU = ModelAliases().table["haiku"]
OPUS = ModelAliases().table["opus"]


@pytest.mark.parametrize(
    ("env", "spawn", "wanted", "parent", "model", "source"),
    [
        ({MODEL_ENV: "opus"}, "haiku", "sonnet", "claude-parent-1", OPUS, "env"),
        ({}, "haiku", "sonnet", "claude-parent-1", HAIKU, "spawn"),
        ({}, None, "sonnet", "claude-parent-1", SONNET, "definition"),
        ({}, None, "inherit", "claude-parent-1", "claude-parent-1", "parent"),
        ({}, None, "inherit", None, ModelAliases().table[DEFAULT_MODEL], "default"),
        # "inherit" or blank at a level passes the choice down.
        ({MODEL_ENV: "  "}, "inherit", "haiku", None, HAIKU, "definition"),
        ({MODEL_ENV: "inherit"}, "", "inherit", "claude-parent-1", "claude-parent-1", "parent"),
    ],
)
def test_the_chain_in_order(
    env: dict[str, str],
    spawn: str | None,
    wanted: str,
    parent: str | None,
    model: str,
    source: str,
) -> None:
    choice = resolve_model(spawn=spawn, definition=definition(model=wanted), parent=parent, env=env)
    assert (choice.model, choice.source) == (model, source)
    assert choice.diagnostic is None


def test_aliases_come_from_the_table_the_user_can_override() -> None:
    aliases = ModelAliases().with_overrides({"fast": "claude-haiku-9", "sonnet": "claude-sonnet-9"})
    assert resolve_model(spawn="FAST", env={}, aliases=aliases).model == "claude-haiku-9"
    assert resolve_model(definition="sonnet", env={}, aliases=aliases).model == "claude-sonnet-9"


def test_an_unknown_name_is_passed_through_with_a_diagnostic() -> None:
    choice = resolve_model(spawn="gpt-7-turbo", env={})
    assert choice == ModelChoice(
        model="gpt-7-turbo", source="spawn", requested="gpt-7-turbo", diagnostic=choice.diagnostic
    )
    assert choice.diagnostic is not None
    assert "'gpt-7-turbo' is neither a known alias" in choice.diagnostic
    env_choice = resolve_model(env={MODEL_ENV: "mystery"})
    assert env_choice.diagnostic is not None
    assert env_choice.diagnostic.startswith(f"${MODEL_ENV} 'mystery'")


def test_full_ids_pass_without_a_diagnostic() -> None:
    choice = resolve_model(definition="claude-opus-4-7", env={})
    assert (choice.model, choice.diagnostic) == ("claude-opus-4-7", None)


def test_the_environment_is_read_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_ENV, "haiku")
    assert resolve_model(spawn="opus").model == HAIKU
    monkeypatch.delenv(MODEL_ENV)
    assert resolve_model(spawn="opus").model == OPUS


def test_opusplan_runs_an_agent_in_plan_mode_on_opus_and_others_on_sonnet() -> None:
    """Claude Code's ``opusplan``: opus while planning, sonnet to execute.

    A subagent whose ``permissionMode`` is ``plan`` only plans, so it gets opus.
    """
    from subagents.agents import PermissionMode

    aliases = ModelAliases()
    planner = definition(model="opusplan", permission_mode=PermissionMode.PLAN)
    doer = definition(model="opusplan")
    assert resolve_model(definition=planner, env={}).model == aliases.resolve("opus")
    assert resolve_model(definition=doer, env={}).model == aliases.resolve("sonnet")
    assert resolve_model(definition=doer, env={}, plan_mode=True).model == aliases.resolve("opus")


def test_a_runtime_keeps_its_choices_but_not_past_a_change_of_env_or_aliases() -> None:
    env: dict[str, str] = {}
    choices = ModelChoices(env)
    table = ModelAliases()
    ask = {"spawn": None, "definition": "sonnet", "parent": None, "default": DEFAULT_MODEL}
    first = choices.choose(aliases=table, **ask)
    assert first.model == SONNET
    assert choices.choose(aliases=table, **ask) is first  # kept, not resolved again
    env[MODEL_ENV] = "haiku"  # set while the runtime runs: the next spawn follows it
    assert choices.choose(aliases=table, **ask).model == HAIKU
    del env[MODEL_ENV]
    renamed = table.with_overrides({"sonnet": "claude-sonnet-custom"})
    assert choices.choose(aliases=renamed, **ask).model == "claude-sonnet-custom"
    assert choices.choose(aliases=table, **ask).model == SONNET
