"""Loading the runtime's configuration: files, env and code merged over the defaults.

:class:`RuntimeConfig` is a frozen value made of small frozen sections
(:class:`LimitsConfig`, :class:`TranscriptsConfig`, :class:`LoggingConfig`)
plus a few top-level keys (all in ``_settings_values``). :func:`load_config`
builds one from these sources, lowest precedence first:

1. the defaults (every one in ``_settings_defaults``);
2. the user file ``<home>/.subagents/config.toml``;
3. the project file: the nearest ``subagents.toml`` found from the working
   directory upward, stopping at a folder that holds ``.git`` (the repository
   root, which is still searched) or at the filesystem root. It came with the
   repository: until the user trusts the project folder (``subagents trust``),
   its ``UNTRUSTED_PROJECT_KEYS`` (hooks, state_dir, retention_days,
   trusted_sources) are left out, and one that is not a regular file (a
   directory, a FIFO, a device) is reported in :attr:`RuntimeConfig.warnings`
   and not read;
4. environment variables ``SUBAGENTS_*``;
5. ``overrides`` passed by code (the CLI's flags).

A file holds any subset of::

    state_dir = "~/.subagents/state"  # "~" is the home folder; a relative path is
                                      # relative to the folder of the file
    provider = "auto"                 # auto | scripted | anthropic (auto: anthropic
                                      # when ANTHROPIC_API_KEY is set)
    model = "sonnet"                  # the lead's default model: an alias or a full id
    trusted_sources = ["builtin", "plugin", "user", "project", "cli"]  # the default: all;
                                      # project only once its folder is trusted
    nicknames = ["Ada", "Grace"]      # replaces the shipped pool
    env_passthrough = ["GITHUB_TOKEN"]  # secret variables Bash and hooks still get
                                      # (their values are still masked in results)

    [limits]
    max_threads = 8
    wait_max_seconds = 600.0

    [model_aliases]                   # adds to, or replaces entries of, the shipped table
    fast = "claude-haiku-5-5"

    [hooks]                           # the ``hooks`` object of Claude Code settings
    PreToolUse = [{ matcher = "Bash", hooks = [{ type = "command", command = "./check.sh" }] }]

    [mcp_servers.time]  # Codex's shape: an MCP server (stdio, or url = "..." for HTTP)
    command = "uvx"
    args = ["mcp-server-time"]

    [transcripts]
    retention_days = 30
    raise_file_limit = true           # the soft open-file limit up to the hard one while open

    [logging]
    stderr_level = "info"

    [collector]                       # Python's cycle collector while a runtime is open
    policy = "relaxed"                # the default; default (Python's own) | freeze

Merging: a higher source replaces a lower one key by key (``limits.max_threads``
alone, not the whole ``[limits]`` table); ``model_aliases`` merge alias by alias;
``hooks`` are concatenated event by event (user hooks first), since Claude Code
runs the hooks of every settings file.

Environment variables follow one rule: ``SUBAGENTS_`` and the key in upper case,
a table and its key joined by a double underscore::

    SUBAGENTS_STATE_DIR=/var/lib/subagents     state_dir (relative: to the working folder)
    SUBAGENTS_PROVIDER=scripted                provider
    SUBAGENTS_MODEL=opus                       model
    SUBAGENTS_TRUSTED_SOURCES=builtin,project  trusted_sources (comma list, or a JSON array)
    SUBAGENTS_ENV_PASSTHROUGH=GITHUB_TOKEN     env_passthrough (comma list, or a JSON array)
    SUBAGENTS_LIMITS__MAX_THREADS=4            limits.max_threads
    SUBAGENTS_TRANSCRIPTS__ENABLED=false       transcripts.enabled (true/false, 1/0, yes/no, on/off)
    SUBAGENTS_MODEL_ALIASES__FAST=claude-...   model_aliases.fast
    SUBAGENTS_MODEL_ALIASES='{"fast": "..."}'  model_aliases (a JSON object)
    SUBAGENTS_HOOKS='{"PreToolUse": [...]}'    hooks (a JSON object)

The ``limits`` keys are unique, so ``SUBAGENTS_MAX_THREADS=4`` is accepted for
``SUBAGENTS_LIMITS__MAX_THREADS=4`` (setting both to different values is an
error). An empty variable counts as unset. A ``SUBAGENTS_*`` variable that names
no setting is not an error (other programs may share the prefix) but is listed
in :attr:`RuntimeConfig.warnings`, with the closest setting's name.

Every wrong value, whatever its source, raises one :class:`ConfigError` that
names the file (or the variable), the key, what was expected and what was
found, and says what to do; a TOML syntax error names the file and the line.
:attr:`RuntimeConfig.sources` says where each value came from, for
``subagents config show``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, TypeAlias

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from subagents._small_file import FileRefused, read_small_file
from subagents.runtime._config.checks import check_hook_event, show_value
from subagents.runtime._config.defaults import (
    CONFIG_FILE_MAX_BYTES,
    ENV_PREFIX,
    PROJECT_CONFIG_NAME,
    USER_CONFIG_PATH,
)
from subagents.runtime._config.env import ENV_KINDS, env_name, env_variable_names, parse_env
from subagents.runtime._config.origins import (
    CODE,
    DEFAULTS,
    RANK_PROJECT,
    RANK_USER,
    SettingOrigin,
    env_origin,
    file_origin,
    find_line,
    moved,
    shape_error,
    unknown_key,
)
from subagents.runtime._config.trust import ProjectTrust, without_untrusted_keys
from subagents.runtime._config.trusted_folders import load_trust_store, project_folder
from subagents.runtime._config.values import (
    SCALARS,
    SECTIONS,
    TABLES,
    TOP_KEYS,
    RuntimeConfig,
    section_keys,
)
from subagents.runtime._exceptions import ConfigError

__all__ = ["find_project_config", "load_config"]

_Key: TypeAlias = tuple[str, str | None]  # (top key, key inside its table or None)


def _dotted(key: _Key) -> str:
    return key[0] if key[1] is None else f"{key[0]}.{key[1]}"


@attrs.define
class _Loader:
    """Collects the values of every source, highest last, with where each came from."""

    cwd: Path
    home: Path
    values: dict[_Key, Any] = attrs.Factory(dict)
    origins: dict[_Key, list[SettingOrigin]] = attrs.Factory(dict)
    warnings: list[str] = attrs.Factory(list)

    def set(self, key: _Key, value: Any, origin: SettingOrigin) -> None:
        self.values[key] = value
        self.origins.setdefault(key, []).append(origin)

    def origin_of(self, dotted: str) -> SettingOrigin:
        """The source of a dotted key's value (of its table for a table entry)."""
        top, _, sub = dotted.partition(".")
        found = self.origins.get((top, sub or None)) or self.origins.get((top, None))
        return found[-1] if found else DEFAULTS

    # ----------------------------------------------------------- sources

    def read_file(self, path: Path, rank: int, *, trusted: bool = True) -> tuple[str, ...]:
        """Parse one TOML file and add its values; return the keys left out as untrusted.

        A file that is not a regular file (a directory, a FIFO, a link to
        ``/dev/zero`` or to nothing) or is too big is not read: for the project
        file one line in :attr:`warnings` says so, for the user's own file it
        is a :class:`ConfigError`. An untrusted file's
        :data:`~subagents.runtime._config.trust.UNTRUSTED_PROJECT_KEYS` are left out.
        """
        try:
            text = read_small_file(path, CONFIG_FILE_MAX_BYTES).decode("utf-8")
        except (FileRefused, FileNotFoundError) as exc:
            reason = exc.reason if isinstance(exc, FileRefused) else "is a link to nothing"
            if rank == RANK_PROJECT:  # a repository's file: reported, and the run goes on
                self.warnings.append(
                    f"{path} {reason}; it is ignored. Make it a TOML file, or remove it."
                )
                return ()
            raise ConfigError(
                str(path),
                "",
                "a readable UTF-8 text file",
                reason=f"cannot read the file: it {reason}",
                path=path,
                hint="Make it a TOML file, or remove it.",
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ConfigError(
                str(path),
                "",
                "a readable UTF-8 text file",
                reason=f"cannot read the file: {detail}",
                path=path,
                hint="Fix the file's permissions or encoding, or remove it.",
            ) from None
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            match = re.search(r"line (\d+)", str(exc))
            raise ConfigError(
                str(path),
                "",
                "valid TOML",
                reason=f"invalid TOML: {exc}",
                path=path,
                line=int(match[1]) if match else None,
                hint="Fix the syntax at that line (see https://toml.io).",
            ) from None
        except (ValueError, RecursionError) as exc:
            # A number with thousands of digits, or arrays nested thousands deep.
            detail = str(exc) if isinstance(exc, ValueError) else "it nests too deeply"
            raise ConfigError(
                str(path),
                "",
                "valid TOML",
                reason=f"a TOML value cannot be read: {detail}",
                path=path,
                hint="Shorten or flatten that value, or remove it.",
            ) from None
        dropped: tuple[str, ...] = ()
        if not trusted:
            raw, dropped = without_untrusted_keys(raw)
        self.add_mapping(raw, file_origin(path, rank, text), path.parent)
        return dropped

    def add_mapping(self, raw: Mapping[Any, Any], origin: SettingOrigin, base: Path) -> None:
        """Check the keys of a file's (or the code's) mapping and add its values."""
        for top, value in raw.items():
            if not isinstance(top, str):
                raise shape_error(origin, str(top), "a key written as text", top)
            if "." in top and origin is CODE:  # overrides={"limits.max_threads": 4}
                head, _, rest = top.partition(".")
                self.add_mapping({head: {rest: value}}, origin, base)
            elif top in SECTIONS:
                if not isinstance(value, Mapping):
                    raise shape_error(origin, top, f"a table of settings ([{top}])", value)
                valid = section_keys(top)
                for sub, item in value.items():
                    if sub not in valid:
                        raise unknown_key(origin, f"{top}.{sub}", valid, f"in [{top}]")
                    self.set((top, sub), item, origin)
            elif top in TABLES:
                self.add_table(top, value, origin)
            elif top in SCALARS:
                if top == "state_dir":
                    value = self.resolve_path(value, base)
                self.set((top, None), value, origin)
            else:
                raise unknown_key(origin, top, TOP_KEYS, "at the top level")

    def add_table(self, top: str, value: Any, origin: SettingOrigin) -> None:
        """Add ``model_aliases``, ``mcp_servers`` (entry by entry) or ``hooks`` (per event)."""
        if top == "model_aliases":
            if not isinstance(value, Mapping):
                raise shape_error(origin, top, "a table of alias = model id", value)
            for alias, model in value.items():
                if not isinstance(alias, str) or not alias.strip():
                    raise shape_error(origin, top, "aliases written as non-empty text", alias)
                self.set((top, alias.strip().lower()), model, origin)
            return
        if top == "mcp_servers":  # a higher source replaces a server whole
            if not isinstance(value, Mapping):
                raise shape_error(origin, top, "a table of [mcp_servers.NAME] servers", value)
            for name, server in value.items():
                self.set((top, str(name)), server, origin)
            return
        if not isinstance(value, Mapping):
            raise shape_error(origin, top, "a table of hook event = list of hook groups", value)
        for event, groups in value.items():
            name = str(event)
            try:
                check_hook_event(name, groups)
            except ConfigError as exc:
                raise moved(exc, origin, line=find_line(origin.text, exc.key)) from None
            earlier = self.values.get((top, name))
            if isinstance(groups, list | tuple) and isinstance(earlier, list):
                groups = [*earlier, *groups]
            elif isinstance(groups, list | tuple):
                groups = list(groups)
            # (an event subagents never fires is kept as written, and ignored)
            self.set((top, name), groups, origin)

    def read_env(self, env: Mapping[str, str]) -> None:
        """Add the ``SUBAGENTS_*`` variables; note the ones that name no setting."""
        known = env_variable_names()
        alias_prefix = env_name("model_aliases") + "__"
        for name in sorted(env):
            text = env[name]
            if not name.startswith(ENV_PREFIX) or not isinstance(text, str) or not text.strip():
                continue
            origin = env_origin(name)
            if name.startswith(alias_prefix) and len(name) > len(alias_prefix):
                self.set(("model_aliases", name[len(alias_prefix) :].lower()), text.strip(), origin)
                continue
            key = known.get(name)
            if key is None:
                short = {k.removeprefix(ENV_PREFIX): k for k in known}
                close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), short, n=1)
                suggestion = f"; did you mean {short[close[0]]}?" if close else ""
                self.warnings.append(
                    f"environment variable {name} is not a subagents setting{suggestion}"
                )
                continue
            kind = ENV_KINDS[key]
            if kind == "json":
                try:
                    table = json.loads(text)
                except (ValueError, RecursionError):
                    table = None
                if not isinstance(table, dict):
                    raise shape_error(origin, key, "a JSON object", text)
                self.add_table(key, table, origin)
                continue
            top, _, sub = key.partition(".")
            value = parse_env(kind, text)
            if top == "state_dir":
                value = self.resolve_path(value, self.cwd)
            self.set_from_env((top, sub or None), value, origin)

    def set_from_env(self, key: _Key, value: Any, origin: SettingOrigin) -> None:
        """Set a key from a variable, refusing two variables that disagree on it."""
        earlier = self.origins.get(key, [])
        if earlier and earlier[-1].variable is not None and self.values[key] != value:
            other = earlier[-1].variable
            raise ConfigError(
                origin.where,
                _dotted(key),
                f"the same value as {other}, which sets the same key",
                show_value(value),
                variable=origin.variable,
                hint=f"Unset {origin.variable} or {other}.",
            )
        self.set(key, value, origin)

    def resolve_path(self, value: Any, base: Path) -> Any:
        """A path from a source: ``~`` is the home folder; a relative path is below ``base``."""
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value.strip():
            return value
        if value == "~":
            return str(self.home)
        if value.startswith(("~/", "~" + os.sep)):
            return str(self.home / value[2:])
        path = Path(value)
        return str(path if path.is_absolute() else base / path)

    # ----------------------------------------------------------- the result

    def build(self) -> RuntimeConfig:
        """Structure the merged values; report a wrong one where it was written."""
        nested: dict[str, Any] = {}
        for (top, sub), value in self.values.items():
            if sub is None:
                nested[top] = value
            else:
                nested.setdefault(top, {})[sub] = value
        try:
            config = _CONVERTER.structure(nested, RuntimeConfig)
        except (ClassValidationError, ConfigError) as exc:
            raise self.locate(exc) from None
        sources = {}
        for dotted in config.flat():
            top, _, sub = dotted.partition(".")
            found = self.origins.get((top, sub or None))
            if not found:
                sources[dotted] = "default"
            elif top == "hooks":  # concatenated: every source that added hooks, lowest first
                sources[dotted] = " + ".join(dict.fromkeys(o.label for o in found))
            else:
                sources[dotted] = found[-1].label
        return attrs.evolve(config, sources=sources, warnings=tuple(self.warnings))

    def locate(self, exc: BaseException) -> ConfigError:
        """The :class:`ConfigError` for a structuring failure, naming the value's source."""
        path, leaf = _first_error(exc)
        if isinstance(leaf, ConfigError):
            key = leaf.key
            origin = self.origin_of(key)
            # A cross-field check: blame the key set by the highest source.
            for other in leaf.related:
                if self.origin_of(other).rank > origin.rank:
                    key, origin = other, self.origin_of(other)
            error = leaf
            if key != leaf.key:
                error = ConfigError(
                    leaf.origin,
                    key,
                    leaf.expected,
                    leaf.got,
                    reason=f"makes {leaf.key} invalid: expected {leaf.expected}, got {leaf.got}",
                )
            return moved(error, origin, key=key, line=find_line(origin.text, key))
        key = ".".join(path)
        origin = self.origin_of(key)
        if isinstance(leaf, ForbiddenExtraKeysError):  # the loader checks keys first; kept as a net
            extra = sorted(leaf.extra_fields)[0]
            if key in SECTIONS:
                return unknown_key(origin, f"{key}.{extra}", section_keys(key), f"in [{key}]")
            return unknown_key(origin, extra, TOP_KEYS, "at the top level")
        return ConfigError(
            origin.where,
            key,
            "a valid value",
            reason=f"cannot be read: {leaf}",
            path=origin.path,
            variable=origin.variable,
            hint=origin.hint,
        )


def _first_error(
    exc: BaseException, path: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], BaseException]:
    """The first leaf error inside cattrs' nested validation errors, with its key path."""
    if isinstance(exc, ClassValidationError | IterableValidationError) and exc.exceptions:
        inner = exc.exceptions[0]
        step = path
        for note in getattr(inner, "__notes__", ()):
            if isinstance(note, AttributeValidationNote):
                step = (*path, note.name)
            elif isinstance(note, IterableValidationNote):
                step = (*path, str(note.index))
        return _first_error(inner, step)
    return path, exc


def _as_is(value: Any, _: Any) -> Any:
    return value


def _make_converter() -> cattrs.Converter:
    """A converter that builds the nested attrs classes and rejects unknown keys.

    Leaf values pass through unchanged: the classes' own converters and checks
    decide what is acceptable, so a value is judged the same way whether it
    came from a file, the environment or code.
    """
    converter = cattrs.Converter(forbid_extra_keys=True)
    for leaf in (int, float, str, bool, Path):
        converter.register_structure_hook(leaf, _as_is)
    converter.register_structure_hook_func(lambda t: not attrs.has(t), _as_is)
    return converter


_CONVERTER: Final = _make_converter()


def find_project_config(cwd: Path) -> Path | None:
    """The nearest ``subagents.toml`` from ``cwd`` upward, or ``None``.

    The search stops after the first folder holding ``.git`` (a repository's
    root) or at the filesystem root. Whatever has the name is found, a
    directory or a FIFO too: :func:`load_config` reports it rather than
    silently looking past it.
    """
    start = Path(os.path.abspath(cwd))
    for folder in (start, *start.parents):
        candidate = folder / PROJECT_CONFIG_NAME
        if os.path.lexists(candidate):
            return candidate
        if (folder / ".git").exists():
            return None
    return None


def load_config(
    *,
    cwd: Path,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    trust_project: bool | None = None,
) -> RuntimeConfig:
    """The configuration in force in ``cwd``: defaults < user file < project file < env < code.

    ``home`` defaults to the user's home folder and ``env`` to ``os.environ``;
    ``overrides`` is shaped like a file (``{"limits": {"max_threads": 4}}``),
    and its keys may also be dotted (``{"limits.max_threads": 4}``). A wrong
    value anywhere raises :class:`ConfigError`.

    ``trust_project`` says whether the project folder (the git root above
    ``cwd``, else ``cwd``) is trusted; ``None`` asks the user's trust store
    (``<home>/.subagents/trusted-folders.json``). Untrusted, the project file's
    :data:`UNTRUSTED_PROJECT_KEYS` (hooks, state_dir, retention...) are left
    out, and :attr:`RuntimeConfig.project` lists them.
    """
    env = os.environ if env is None else env
    if home is None:
        try:
            home = Path.home()
        except RuntimeError:
            raise ConfigError(
                "defaults",
                "state_dir",
                "a home folder to hold ~/.subagents",
                reason="the home folder is unknown",
                hint="Set HOME, or pass home= to load_config.",
            ) from None
    loader = _Loader(cwd=Path(os.path.abspath(cwd)), home=Path(os.path.abspath(home)))
    loader.set(("state_dir", None), str(loader.home / ".subagents" / "state"), DEFAULTS)
    user_file = loader.home / USER_CONFIG_PATH
    if user_file.exists():
        loader.read_file(user_file, RANK_USER)
    folder = project_folder(loader.cwd)
    if trust_project is None:
        store = load_trust_store(loader.home)
        if store.problem is not None:
            loader.warnings.append(store.problem)
        trust_project = store.trusts(folder)
    project_file = find_project_config(loader.cwd)
    ignored: tuple[str, ...] = ()
    if project_file is not None:
        dropped = loader.read_file(project_file, RANK_PROJECT, trusted=trust_project)
        ignored = tuple(f"{project_file.name} {key}" for key in dropped)
    loader.read_env(env)
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            raise shape_error(CODE, "overrides", "a mapping of settings", overrides)
        loader.add_mapping(overrides, CODE, loader.cwd)
    config = loader.build()
    return attrs.evolve(config, project=ProjectTrust(folder, trust_project, ignored))
