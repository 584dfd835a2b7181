"""Claude Code's model spellings resolve as Claude Code documents them.

From https://docs.claude.com/en/docs/claude-code/model-config ("Model aliases":
``sonnet[1m]`` is Sonnet with a 1-million-token context window, ``opusplan`` uses
``opus`` in plan mode and ``sonnet`` otherwise; "Extended context with [1m]": the
suffix may follow a full model name; ``ANTHROPIC_DEFAULT_OPUS_MODEL`` /
``..._SONNET_MODEL`` decide what ``opusplan`` uses, as overrides do here).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from subagents.agents import ModelAliases, parse_markdown


def test_sonnet_1m_is_sonnet_with_the_long_context() -> None:
    aliases = ModelAliases()
    check = aliases.check("sonnet[1m]")
    assert (check.kind, check.model_id, check.context_1m) == (
        "alias",
        aliases.check("sonnet").model_id,
        True,
    )
    full = aliases.check("claude-sonnet-4-5-20250929[1m]")
    assert (full.kind, full.model_id, full.context_1m) == (
        "model-id",
        "claude-sonnet-4-5-20250929",
        True,
    )
    assert aliases.resolve("sonnet[1m]") == aliases.resolve("sonnet")
    assert aliases.check("inherit[1m]").kind == "unknown"


def test_opusplan_is_sonnet_outside_plan_mode_and_opus_in_it() -> None:
    aliases = ModelAliases()
    check = aliases.check("opusplan")
    assert check.kind == "alias"
    assert check.model_id == aliases.check("sonnet").model_id
    assert check.plan_model_id == aliases.check("opus").model_id
    assert aliases.resolve("opusplan", plan_mode=True) == aliases.resolve("opus")
    moved = aliases.with_overrides({"opus": "claude-opus-x", "sonnet": "claude-sonnet-x"})
    assert (moved.resolve("opusplan"), moved.resolve("opusplan", plan_mode=True)) == (
        "claude-sonnet-x",
        "claude-opus-x",
    )


def test_a_definition_naming_them_gets_no_unknown_model_warning() -> None:
    for model in ("sonnet[1m]", "opusplan"):
        report = parse_markdown(f"---\nname: a\ndescription: d\nmodel: {model}\n---\nx\n")
        assert report.warnings == (), model
        assert report.definitions[0].model == model


@given(st.text(max_size=40))
def test_any_name_with_the_suffix_resolves_like_the_name_without_it(name: str) -> None:
    aliases = ModelAliases()
    plain = aliases.check(name)
    suffixed = aliases.check(name + "[1m]")
    if plain.kind in ("alias", "model-id") and plain.model_id and name.strip() == name:
        assert (suffixed.kind, suffixed.model_id, suffixed.context_1m) == (
            plain.kind,
            plain.model_id,
            True,
        )


def test_a_long_run_of_suffixes_does_not_recurse() -> None:
    assert ModelAliases().check("sonnet" + "[1m]" * 100_000).kind == "unknown"
