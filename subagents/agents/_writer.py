"""Writing a definition back out, as Markdown with frontmatter or as rich YAML.

What is written loads back to an equal definition (apart from ``path`` and
``source``, which come from where the file is put). Markdown uses Claude
Code's field names where Claude Code has one and the richer camelCase fields
for the rest; YAML uses the richer fields throughout.
"""

from __future__ import annotations

from typing import Any

import yaml

from subagents.agents._definition import AgentDefinition, HookSpec, thaw_json

__all__ = ["to_mapping", "to_markdown", "to_yaml"]


def _hooks(hooks: tuple[HookSpec, ...]) -> dict[str, list[dict[str, Any]]]:
    events: dict[str, list[dict[str, Any]]] = {}
    for hook in hooks:
        entry: dict[str, Any] = {"type": "command", "command": hook.command}
        if hook.timeout_seconds is not None:
            entry["timeout"] = hook.timeout_seconds
        group: dict[str, Any] = {"hooks": [entry]}
        if hook.matcher is not None:
            group = {"matcher": hook.matcher, **group}
        events.setdefault(hook.event, []).append(group)
    return events


def _inputs(definition: AgentDefinition) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    for spec in definition.inputs:
        entry: dict[str, Any] = {"type": spec.type.value}
        if spec.description:
            entry["description"] = spec.description
        if spec.required:
            entry["required"] = True
        if spec.default is not None:
            entry["default"] = thaw_json(spec.default)
        if spec.choices:
            entry["enum"] = thaw_json(spec.choices)
        inputs[spec.name] = entry
    return {"inputs": inputs}


def to_mapping(definition: AgentDefinition, *, markdown: bool = False) -> dict[str, Any]:
    """The fields of ``definition`` as plain data, ready to dump.

    With ``markdown``, the system prompt is left out (it is the body) and
    Claude Code's names are used where they exist.
    """
    d = definition
    out: dict[str, Any] = {("name" if markdown else "agentType"): d.name}
    if d.display_name is not None:
        out["displayName"] = d.display_name
    out["description" if markdown else "whenToUse"] = d.description
    if d.tools is not None:
        out["tools"] = list(d.tools)
    if d.disallowed_tools:
        out["disallowedTools"] = list(d.disallowed_tools)
    model_config: dict[str, Any] = {}
    if markdown:
        out["model"] = d.model
    else:
        model_config["model"] = d.model
    settings = d.model_settings
    for key, value in (
        ("temperature", settings.temperature),
        ("topP", settings.top_p),
        ("thinkingBudget", settings.thinking_budget),
    ):
        if value is not None:
            model_config[key] = value
    if model_config:
        out["modelConfig"] = model_config
    run_config: dict[str, Any] = {}
    limits = d.run_limits
    if limits.max_turns is not None:
        if markdown:
            out["maxTurns"] = limits.max_turns
        else:
            run_config["maxTurns"] = limits.max_turns
    if limits.max_time_seconds is not None:
        run_config["maxTimeSeconds"] = limits.max_time_seconds
    if limits.grace_period_seconds is not None:
        run_config["gracePeriodSeconds"] = limits.grace_period_seconds
    if run_config:
        out["runConfig"] = run_config
    prompt_config: dict[str, Any] = {}
    if not markdown:
        prompt_config["systemPrompt"] = d.system_prompt
    if d.query is not None:
        prompt_config["query"] = d.query
    if prompt_config:
        out["promptConfig"] = prompt_config
    if d.inputs:
        out["inputConfig"] = _inputs(d)
    if d.output is not None:
        output: dict[str, Any] = {"outputName": d.output.name}
        if d.output.description:
            output["description"] = d.output.description
        output["schema"] = d.output.as_json_schema()
        out["outputConfig"] = output
    if d.permission_mode is not None:
        out["permissionMode"] = d.permission_mode.value
    if d.approval_mode is not None:
        out["approvalMode"] = d.approval_mode.value
    if d.fork_context:
        out["forkContext"] = True
    if d.critical_reminder is not None:
        out["criticalReminder"] = d.critical_reminder
    if d.background:
        out["background"] = True
    if d.color is not None:
        out["color"] = d.color
    if d.skills:
        out["skills"] = list(d.skills)
    if d.memory is not None:
        out["memory"] = d.memory.value
    if d.hooks:
        out["hooks"] = _hooks(d.hooks)
    if d.initial_prompt is not None:
        out["initialPrompt"] = d.initial_prompt
    if d.disabled_features:
        out["disabledFeatures"] = list(d.disabled_features)
    return out


_RAW_BREAKS = ("\x85", "\u2028", "\u2029")


class _Dumper(yaml.SafeDumper):
    """A safe dumper that writes multi-line text as ``|`` blocks when YAML allows it."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Text ending in a line break stays quoted: as a block it needs ``|+``, after which
    # PyYAML ends the document with ``...``, and a Markdown reader takes that line as
    # the end of the frontmatter (the closing ``---`` would become the prompt).
    block = (
        "\n" in value
        and not value.endswith("\n")
        and all(line.isprintable() for line in value.split("\n"))
    )
    style = "|" if block else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump(data: dict[str, Any]) -> str:
    def dump(allow_unicode: bool) -> str:
        return yaml.dump(
            data,
            Dumper=_Dumper,
            sort_keys=False,
            allow_unicode=allow_unicode,
            default_flow_style=False,
            width=100,
        )

    text = dump(True)
    # PyYAML writes these raw when allowed to, and reads them back as line breaks.
    if any(ch in text for ch in _RAW_BREAKS):
        text = dump(False)
    return text


def to_yaml(definition: AgentDefinition) -> str:
    """The definition as a rich YAML file (``agentType``, ``promptConfig``...)."""
    return _dump(to_mapping(definition))


def to_markdown(definition: AgentDefinition) -> str:
    """The definition as a Claude Code Markdown file: frontmatter, then the prompt."""
    front = _dump(to_mapping(definition, markdown=True))
    body = definition.system_prompt
    return f"---\n{front}---\n\n{body}\n" if body else f"---\n{front}---\n"
