"""Agent definitions: the value, its loaders, scope discovery and the built-ins.

Users arrive with agent files they already have. This package reads them as
Claude Code does (Markdown with YAML frontmatter, plugin folders, the
``--agents`` JSON string), reads the richer YAML/JSON definitions
(``modelConfig``, ``runConfig``, ``inputConfig``, ``outputConfig``...), and
says what it did with every field of every file::

    from subagents.agents import discover_agents

    catalog = discover_agents(cwd=project_dir)
    explore = catalog.get("Explore")
    for report in catalog.reports:
        for diagnostic in report.diagnostics:
            print(diagnostic.format())
"""

from __future__ import annotations

from subagents.agents._builtins import BUILTIN_AGENT_NAMES, THOROUGHNESS_LEVELS, builtin_agents
from subagents.agents._codex import CODEX_SANDBOX_MODES, parse_codex
from subagents.agents._definition import (
    AgentDefinition,
    AgentSource,
    ApprovalMode,
    HookSpec,
    InputSpec,
    InputType,
    McpServerRef,
    MemoryScope,
    ModelSettings,
    OutputSpec,
    PermissionMode,
    RunLimits,
)
from subagents.agents._diagnostics import (
    Diagnostic,
    DiagnosticCode,
    FileKind,
    FileReport,
    Severity,
)
from subagents.agents._discovery import (
    FOREIGN_AGENT_DIRS,
    AgentCatalog,
    Override,
    SearchedPlace,
    discover_agents,
    load_paths,
)
from subagents.agents._exceptions import AgentsError, DefinitionError, UnknownAgentError
from subagents.agents._fields import IGNORED_FIELDS, KNOWN_FIELDS
from subagents.agents._gemini import GEMINI_TOOL_NAMES, parse_gemini
from subagents.agents._markdown import parse_markdown
from subagents.agents._models import DEFAULT_MODEL_ALIASES, ModelAliases, ModelCheck
from subagents.agents._prompts import (
    MEMORY_LINES,
    build_system_prompt,
    memory_file,
    read_memory,
    render_query,
    render_template,
)
from subagents.agents._records import (
    AgentRecord,
    DiagnosticRecord,
    ErrorRecord,
    ValidationRecord,
    catalog_record,
    diagnostics_for,
    encode_record,
    validation_record,
)
from subagents.agents._scan import load_file, load_plugin, load_tree
from subagents.agents._tools import (
    IMPLEMENTED_TOOLS,
    KNOWN_TOOLS,
    LIFECYCLE_TOOLS,
    classify_tool,
)
from subagents.agents._writer import to_markdown, to_yaml
from subagents.agents._yaml_json import parse_agents_json, parse_document

__all__ = [
    # the value
    "AgentDefinition",
    "AgentSource",
    "ApprovalMode",
    "HookSpec",
    "McpServerRef",
    "InputSpec",
    "InputType",
    "MemoryScope",
    "ModelSettings",
    "OutputSpec",
    "PermissionMode",
    "RunLimits",
    # diagnostics
    "Diagnostic",
    "DiagnosticCode",
    "FileKind",
    "FileReport",
    "Severity",
    # loading
    "parse_markdown",
    "parse_gemini",
    "parse_codex",
    "GEMINI_TOOL_NAMES",
    "CODEX_SANDBOX_MODES",
    "FOREIGN_AGENT_DIRS",
    "parse_document",
    "parse_agents_json",
    "load_file",
    "load_tree",
    "load_plugin",
    "load_paths",
    "KNOWN_FIELDS",
    "IGNORED_FIELDS",
    # discovery
    "discover_agents",
    "AgentCatalog",
    "Override",
    "SearchedPlace",
    # built-ins
    "builtin_agents",
    "BUILTIN_AGENT_NAMES",
    "THOROUGHNESS_LEVELS",
    # models and tools
    "ModelAliases",
    "ModelCheck",
    "DEFAULT_MODEL_ALIASES",
    "IMPLEMENTED_TOOLS",
    "KNOWN_TOOLS",
    "LIFECYCLE_TOOLS",
    "classify_tool",
    # prompts and memory
    "render_template",
    "render_query",
    "build_system_prompt",
    "memory_file",
    "read_memory",
    "MEMORY_LINES",
    # writing
    "to_markdown",
    "to_yaml",
    # JSON records
    "AgentRecord",
    "DiagnosticRecord",
    "ErrorRecord",
    "ValidationRecord",
    "validation_record",
    "catalog_record",
    "diagnostics_for",
    "encode_record",
    # errors
    "AgentsError",
    "DefinitionError",
    "UnknownAgentError",
]
