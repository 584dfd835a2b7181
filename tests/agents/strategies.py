"""Hypothesis strategies for agent definitions and for hostile frontmatter."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import strategies as st

from subagents.agents import (
    KNOWN_FIELDS,
    AgentDefinition,
    AgentSource,
    ApprovalMode,
    HookSpec,
    InputSpec,
    InputType,
    MemoryScope,
    ModelSettings,
    OutputSpec,
    PermissionMode,
    RunLimits,
)

# Any character but surrogates (not encodable) and carriage returns (Markdown
# normalises line endings, so a prompt with \r cannot survive a file round trip).
_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r")
text = st.text(_chars, max_size=40)
stripped = text.map(str.strip)
nonempty = stripped.filter(bool)
one_line = nonempty.filter(lambda s: "\n" not in s)
prompt = st.text(_chars, max_size=300).map(str.strip)
identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,11}", fullmatch=True)
agent_name = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,23}", fullmatch=True)
names = st.lists(one_line, max_size=4).map(tuple)


def _value_of(kind: InputType) -> st.SearchStrategy[Any]:
    number = st.floats(allow_nan=False, allow_infinity=False, width=32) | st.integers(-99, 99)
    return {
        InputType.STRING: stripped,
        InputType.NUMBER: number,
        InputType.INTEGER: st.integers(-(10**6), 10**6),
        InputType.BOOLEAN: st.booleans(),
        InputType.STRING_ARRAY: st.lists(text, max_size=3),
        InputType.NUMBER_ARRAY: st.lists(number, max_size=3),
    }[kind]


@st.composite
def input_specs(draw: st.DrawFn) -> tuple[InputSpec, ...]:
    chosen = draw(
        st.lists(identifier, max_size=3, unique=True).filter(
            lambda xs: not {"cwd", "agent_type", "prompt"} & set(xs)
        )
    )
    specs = []
    for name in chosen:
        kind = draw(st.sampled_from(InputType))
        choices = draw(st.lists(_value_of(kind), max_size=3, unique_by=repr))
        default = draw(st.none() | (st.sampled_from(choices) if choices else _value_of(kind)))
        specs.append(
            InputSpec(name, kind, draw(stripped), draw(st.booleans()), default, tuple(choices))
        )
    return tuple(specs)


_schemas = st.sampled_from(
    [
        {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
        {"type": "array", "items": {"type": "integer", "minimum": 0}},
        {"type": "string", "enum": ["yes", "no"]},
        {},
    ]
)


@st.composite
def hook_specs(draw: st.DrawFn) -> tuple[HookSpec, ...]:
    """Hooks grouped by event, as a ``hooks:`` mapping lists them."""
    events = draw(
        st.lists(
            st.sampled_from(["PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop"]),
            max_size=3,
            unique=True,
        )
    )
    hooks: list[HookSpec] = []
    for event in events:
        for _ in range(draw(st.integers(1, 2))):
            hooks.append(
                HookSpec(
                    event,
                    draw(nonempty),
                    draw(st.none() | nonempty),
                    draw(st.none() | st.floats(0.001, 3600, allow_nan=False)),
                )
            )
    return tuple(hooks)


@st.composite
def definitions(draw: st.DrawFn) -> AgentDefinition:
    """Any definition the loaders can express, with canonical (loaded) values."""
    model = draw(
        st.sampled_from(["inherit", "sonnet", "haiku", "opus", "claude-opus-4-1-20250805"])
        | one_line.filter(lambda s: s.lower() != "inherit")
    )
    maybe = st.none
    return AgentDefinition(
        name=draw(agent_name),
        description=draw(nonempty),
        system_prompt=draw(prompt),
        display_name=draw(maybe() | text),
        query=draw(maybe() | prompt),
        tools=draw(maybe() | names),
        disallowed_tools=draw(names),
        model=model,
        model_settings=ModelSettings(
            draw(maybe() | st.floats(0, 2)),
            draw(maybe() | st.floats(0, 1)),
            draw(maybe() | st.integers(-1, 10_000_000)),
        ),
        run_limits=RunLimits(
            draw(maybe() | st.integers(1, 1_000_000)),
            draw(maybe() | st.floats(0.001, 604800)),
            draw(maybe() | st.floats(0, 604800)),
        ),
        inputs=draw(input_specs()),
        output=draw(maybe() | st.builds(OutputSpec, identifier, stripped, _schemas)),
        fork_context=draw(st.booleans()),
        critical_reminder=draw(maybe() | text),
        permission_mode=draw(maybe() | st.sampled_from(PermissionMode)),
        approval_mode=draw(maybe() | st.sampled_from(ApprovalMode)),
        background=draw(st.booleans()),
        color=draw(maybe() | one_line),
        skills=draw(names),
        memory=draw(maybe() | st.sampled_from(MemoryScope)),
        hooks=draw(hook_specs()),
        initial_prompt=draw(maybe() | text),
        disabled_features=draw(names),
        source=draw(st.sampled_from(AgentSource)),
    )


# -- hostile frontmatter --------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**40, max_value=10**60)
    | st.floats()
    | st.text(max_size=30)
    | st.text(max_size=3000).filter(lambda s: len(s) > 2000)
)
_json_like = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
_keys = st.sampled_from([*KNOWN_FIELDS, "prompt", "systemPrompt"]) | st.text(max_size=12)


def _dump(data: dict[str, Any]) -> str:
    try:
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError:
        return "name: x\n"


structured_frontmatter = st.dictionaries(_keys, _json_like, max_size=8).map(_dump)
# Named and described, so the field interpreters see every wrong type and size.
agentish_frontmatter = st.dictionaries(_keys, _json_like, max_size=8).map(
    lambda d: _dump({"name": "fuzz", "description": "fuzzing", **d})
)
line_frontmatter = st.lists(
    st.tuples(_keys, st.text(max_size=40)).map(lambda kv: f"{kv[0]}: {kv[1]}"), max_size=8
).map("\n".join)
raw_frontmatter = st.text(max_size=300)
frontmatter = agentish_frontmatter | structured_frontmatter | line_frontmatter | raw_frontmatter
