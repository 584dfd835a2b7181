"""Runtime configuration: defaults, files, environment and code, and the errors they give.

Home and project folders are made in ``tmp_path`` and passed in: the real home
folder and environment are never read.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents._exceptions import SubagentsError
from subagents.actors import SupervisorConfig
from subagents.runtime import (
    DEFAULT_WAIT_SECONDS,
    ConfigError,
    Limits,
    LimitsConfig,
    RuntimeConfig,
    env_variable_names,
    find_project_config,
    load_config,
    stderr_level_for,
)


@attrs.frozen
class Dirs:
    """A fake home folder and a project (a git repository) with a subfolder as cwd."""

    home: Path
    project: Path
    cwd: Path

    @property
    def user_file(self) -> Path:
        return self.home / ".subagents" / "config.toml"

    @property
    def project_file(self) -> Path:
        return self.project / "subagents.toml"

    def load(self, env: dict[str, str] | None = None, **kw: Any) -> RuntimeConfig:
        """The config in ``cwd``; the project is trusted unless ``trust_project`` says otherwise
        (these tests are about what a trusted project file may set)."""
        kw.setdefault("trust_project", True)
        return load_config(cwd=self.cwd, home=self.home, env={} if env is None else env, **kw)


@pytest.fixture
def dirs(tmp_path: Path) -> Dirs:
    home = tmp_path / "home"
    project = tmp_path / "work" / "project"
    cwd = project / "src" / "pkg"
    cwd.mkdir(parents=True)
    (home / ".subagents").mkdir(parents=True)
    (project / ".git").mkdir()
    return Dirs(home=home, project=project, cwd=cwd)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def outcome(dirs: Dirs, **kw: Any) -> RuntimeConfig | ConfigError:
    """The config, or the :class:`ConfigError` loading raised (anything else propagates)."""
    try:
        return dirs.load(**kw)
    except ConfigError as error:
        return error


def error_of(dirs: Dirs, **kw: Any) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        dirs.load(**kw)
    return info.value


# --------------------------------------------------------------------------- defaults


def test_defaults_without_files_or_env(dirs: Dirs) -> None:
    config = dirs.load()
    assert config == RuntimeConfig(state_dir=dirs.home / ".subagents" / "state")
    assert config.limits.max_threads == 8
    assert config.limits.max_depth == 1
    assert config.provider == "auto"
    assert config.model is None
    assert config.trusted_sources == {"builtin", "plugin", "user", "project", "cli"}
    assert config.transcripts.retention_days == 30
    assert config.logging.stderr_level == "warning"
    assert set(config.sources.values()) == {"default"}
    assert config.sources.keys() == config.flat().keys()
    assert config.warnings == ()


def test_defaults_agree_with_the_supervisor_and_the_loop() -> None:
    config = RuntimeConfig()
    assert config.supervisor_config() == SupervisorConfig()
    assert config.run_limits() == Limits()


def test_config_is_a_frozen_hashable_value() -> None:
    config = RuntimeConfig(model_aliases={"fast": "claude-haiku-4-5"})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        config.model = "opus"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.model_aliases["x"] = "y"  # type: ignore[index]
    assert hash(config) == hash(RuntimeConfig(model_aliases={"other": "id"}))


def test_built_from_code_a_wrong_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        LimitsConfig(max_threads=0)
    assert isinstance(info.value, SubagentsError)
    assert str(info.value).startswith(
        "code: limits.max_threads: expected a whole number of at least 1, got 0"
    )


# --------------------------------------------------------------------------- precedence


def test_precedence_defaults_user_project_env_code(dirs: Dirs) -> None:
    write(dirs.user_file, "model = 'haiku'\n[limits]\nmax_threads = 2\nmax_depth = 3\n")
    write(dirs.project_file, "[limits]\nmax_threads = 3\nmailbox_size = 10\n")
    config = dirs.load()
    assert (config.limits.max_threads, config.limits.max_depth) == (3, 3)
    assert config.limits.mailbox_size == 10
    assert config.model == "haiku"
    assert config.sources["limits.max_threads"] == str(dirs.project_file)
    assert config.sources["limits.max_depth"] == str(dirs.user_file)
    assert config.sources["model"] == str(dirs.user_file)
    assert config.sources["limits.cancel_timeout"] == "default"

    config = dirs.load(env={"SUBAGENTS_MAX_THREADS": "4"})
    assert config.limits.max_threads == 4
    assert config.sources["limits.max_threads"] == "env SUBAGENTS_MAX_THREADS"

    config = dirs.load(
        env={"SUBAGENTS_LIMITS__MAX_THREADS": "4"}, overrides={"limits": {"max_threads": 5}}
    )
    assert config.limits.max_threads == 5
    assert config.sources["limits.max_threads"] == "code"
    assert config.sources["limits.mailbox_size"] == str(dirs.project_file)


def test_dotted_override_keys(dirs: Dirs) -> None:
    config = dirs.load(overrides={"limits.max_depth": 2, "logging.stderr_level": "debug"})
    assert config.limits.max_depth == 2
    assert config.logging.stderr_level == "debug"
    assert config.sources["logging.stderr_level"] == "code"


def test_project_file_is_found_upward_and_not_beyond_the_repository(dirs: Dirs) -> None:
    outside = write(dirs.project.parent / "subagents.toml", "model = 'outside'\n")
    assert find_project_config(dirs.cwd) is None
    assert dirs.load().model is None
    inside = write(dirs.project_file, "model = 'inside'\n")
    assert find_project_config(dirs.cwd) == inside
    assert dirs.load().model == "inside"
    # Without a repository, the search goes on to the filesystem root.
    (dirs.project / ".git").rmdir()
    inside.unlink()
    assert find_project_config(dirs.cwd) == outside


def test_paths_are_relative_to_their_source(dirs: Dirs) -> None:
    write(dirs.project_file, "state_dir = 'var/state'\n")
    assert dirs.load().state_dir == dirs.project / "var" / "state"
    write(dirs.project_file, "state_dir = '~/elsewhere'\n")
    assert dirs.load().state_dir == dirs.home / "elsewhere"
    config = dirs.load(env={"SUBAGENTS_STATE_DIR": "here"})
    assert config.state_dir == dirs.cwd / "here"
    assert config.sources["state_dir"] == "env SUBAGENTS_STATE_DIR"
    assert dirs.load(overrides={"state_dir": dirs.home / "x"}).state_dir == dirs.home / "x"


def test_model_aliases_merge_alias_by_alias(dirs: Dirs) -> None:
    write(dirs.user_file, "[model_aliases]\nfast = 'id-user'\nsmart = 'id-smart'\n")
    write(dirs.project_file, "[model_aliases]\nFast = 'id-project'\n")
    config = dirs.load(env={"SUBAGENTS_MODEL_ALIASES__CHEAP": "id-env"})
    assert dict(config.model_aliases) == {
        "fast": "id-project",
        "smart": "id-smart",
        "cheap": "id-env",
    }
    assert config.sources["model_aliases.smart"] == str(dirs.user_file)
    assert config.sources["model_aliases.cheap"] == "env SUBAGENTS_MODEL_ALIASES__CHEAP"
    table = config.alias_table()
    assert table.resolve("fast") == "id-project"
    assert table.resolve("haiku") == "claude-haiku-5-5"  # the shipped table stays


def test_hooks_from_every_source_are_concatenated(dirs: Dirs) -> None:
    group = "{{ matcher = 'Bash', hooks = [{{ type = 'command', command = '{}' }}] }}"
    write(dirs.user_file, f"[hooks]\nPreToolUse = [{group.format('echo user')}]\n")
    write(dirs.project_file, f"[hooks]\nPreToolUse = [{group.format('echo project')}]\n")
    env_hooks = {"SubagentStop": [{"hooks": [{"type": "command", "command": "echo env"}]}]}
    config = dirs.load(env={"SUBAGENTS_HOOKS": json.dumps(env_hooks)})
    hooks = config.global_hooks()
    assert [h.command for h in hooks] == ["echo user", "echo project", "echo env"]
    assert config.sources["hooks.PreToolUse"] == f"{dirs.user_file} + {dirs.project_file}"
    assert config.sources["hooks.SubagentStop"] == "env SUBAGENTS_HOOKS"


def test_environment_values_are_parsed_per_type(dirs: Dirs) -> None:
    config = dirs.load(
        env={
            "SUBAGENTS_LIMITS__CLOSE_GRACE_PERIOD": " 0.5 ",
            "SUBAGENTS_TRANSCRIPTS__ENABLED": "off",
            "SUBAGENTS_LOGGING__JSON_FILE": "YES",
            "SUBAGENTS_TRUSTED_SOURCES": "builtin, user",
            "SUBAGENTS_NICKNAMES": '["Ada", "Grace"]',
            "SUBAGENTS_PROVIDER": "Scripted",
            "SUBAGENTS_MODEL": "opus",
            "SUBAGENTS_MAX_DEPTH": "",  # empty: unset
            "OTHER": "ignored",
        }
    )
    assert config.limits.close_grace_period == 0.5
    assert config.transcripts.enabled is False
    assert config.logging.json_file is True
    assert config.trusted_sources == {"builtin", "user"}
    assert config.nicknames == ("Ada", "Grace")
    assert config.supervisor_config().nicknames == ("Ada", "Grace")
    assert config.provider == "scripted"
    assert config.model == "opus"
    assert config.sources["limits.max_depth"] == "default"


def test_every_setting_has_an_environment_variable() -> None:
    names = env_variable_names()
    keys = set(RuntimeConfig().flat())
    assert keys <= set(names.values())
    assert names["SUBAGENTS_LIMITS__WAIT_MAX_SECONDS"] == "limits.wait_max_seconds"
    assert names["SUBAGENTS_WAIT_MAX_SECONDS"] == "limits.wait_max_seconds"
    assert names["SUBAGENTS_STATE_DIR"] == "state_dir"


def test_unknown_environment_variables_are_warnings(dirs: Dirs) -> None:
    config = dirs.load(env={"SUBAGENTS_MAX_THREAD": "3", "SUBAGENTS_UNRELATED": "x"})
    assert config.limits.max_threads == 8
    assert any(
        "SUBAGENTS_MAX_THREAD " in w and "SUBAGENTS_MAX_THREADS" in w for w in config.warnings
    )
    assert any("SUBAGENTS_UNRELATED" in w and "did you mean" not in w for w in config.warnings)


# --------------------------------------------------------------------------- derived values


def test_derived_values(dirs: Dirs) -> None:
    config = dirs.load(
        overrides={
            "trusted_sources": ["builtin"],
            "limits": {"max_turns": 7, "max_time_seconds": 9, "wait_max_seconds": 60},
        }
    )
    assert config.trust_policy().trusts("builtin")
    assert not config.trust_policy().trusts("project")
    assert config.run_limits() == Limits(max_turns=7, max_time_seconds=9.0)
    assert config.logs_dir == config.state_dir / "logs"
    assert config.sessions_dir == config.state_dir / "sessions"
    limits = config.limits
    assert limits.clamp_wait(None) == DEFAULT_WAIT_SECONDS
    assert limits.clamp_wait(0) == limits.wait_min_seconds
    assert limits.clamp_wait(10_000) == 60
    assert limits.clamp_wait(float("nan")) == DEFAULT_WAIT_SECONDS
    assert limits.clamp_wait(12.5) == 12.5


def test_provider_auto_picks_anthropic_only_with_a_key() -> None:
    assert RuntimeConfig().resolved_provider({}) == "scripted"
    assert RuntimeConfig().resolved_provider({"ANTHROPIC_API_KEY": "  "}) == "scripted"
    assert RuntimeConfig().resolved_provider({"ANTHROPIC_API_KEY": "k"}) == "anthropic"
    assert RuntimeConfig(provider="scripted").resolved_provider({"ANTHROPIC_API_KEY": "k"}) == (
        "scripted"
    )
    assert RuntimeConfig(provider="anthropic").resolved_provider({}) == "anthropic"


def test_stderr_level_for_verbosity() -> None:
    assert stderr_level_for(0) == "warning"
    assert stderr_level_for(0, "error") == "error"
    assert stderr_level_for(1) == "info"
    assert stderr_level_for(2) == "debug"
    assert stderr_level_for(5) == "debug"


# --------------------------------------------------------------------------- errors


def test_bad_type_in_a_file_names_file_key_expectation_and_line(dirs: Dirs) -> None:
    path = write(dirs.project_file, "model = 'opus'\n\n[limits]\nmax_threads = \"eight\"\n")
    error = error_of(dirs)
    assert (
        'subagents.toml: limits.max_threads: expected a whole number of at least 1, got "eight"'
        in str(error)
    )
    assert "(line 4)" in str(error)
    assert f"Fix it in {path}" in str(error)
    assert (error.path, error.key, error.line, error.variable) == (
        path,
        "limits.max_threads",
        4,
        None,
    )
    assert error.got == '"eight"'


def test_out_of_range_value(dirs: Dirs) -> None:
    write(dirs.user_file, "limits.max_depth = -1\n")
    error = error_of(dirs)
    assert error.path == dirs.user_file
    assert "config.toml: limits.max_depth: expected a whole number of at least 0, got -1" in str(
        error
    )
    assert error.line == 1


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("provider = 'openai'", "provider", 'one of "auto", "scripted", "anthropic"'),
        ("[transcripts]\nenabled = 'yes'", "transcripts.enabled", "true or false"),
        ("[transcripts]\non_disk_error = 'drop'", "transcripts.on_disk_error", '"memory", "stop"'),
        ("[logging]\nstderr_level = 'loud'", "logging.stderr_level", '"debug", "info"'),
        ("[limits]\nclose_grace_period = -1.0", "limits.close_grace_period", "0 or more"),
        ("[limits]\ncancel_timeout = inf", "limits.cancel_timeout", "finite number of seconds"),
        ("[limits]\nmax_turns = true", "limits.max_turns", "whole number of at least 1"),
        ("[limits]\nmax_threads = 2.5", "limits.max_threads", "whole number"),
        ("state_dir = 3", "state_dir", "a folder path"),
        ("model = ''", "model", "non-empty text"),
        ("trusted_sources = 'builtin'", "trusted_sources", "a list of agent sources"),
        ("trusted_sources = ['space']", "trusted_sources", "each one of builtin"),
        ("nicknames = ['Ada', 'Ada']", "nicknames", "distinct"),
        ("nicknames = []", "nicknames", "non-empty list"),
        ("[model_aliases]\nfast = 3", "model_aliases.fast", "a model id"),
        ("model_aliases = 'fast'", "model_aliases", "a table of alias"),
        ("limits = 3", "limits", "a table of settings ([limits])"),
        ("hooks = []", "hooks", "a table of hook event"),
        ("[hooks]\nPreToolUse = 'echo'", "hooks.PreToolUse", "must be a list"),
        ("[hooks]\nOnFire = []", "hooks.OnFire", "is not a hook event"),
        ("[limits]\nmax_threads = 1979-05-27", "limits.max_threads", "the date/time 1979"),
    ],
)
def test_wrong_values_in_a_file(dirs: Dirs, text: str, key: str, expected: str) -> None:
    write(dirs.project_file, text + "\n")
    error = error_of(dirs)
    assert error.key == key
    assert error.path == dirs.project_file
    assert str(error).startswith(f"{dirs.project_file}: {key}: ")
    assert expected in str(error)


def test_unknown_key_suggests_the_closest_and_lists_the_valid_ones(dirs: Dirs) -> None:
    write(dirs.project_file, "[limits]\nmax_thread = 3\n")
    error = error_of(dirs)
    message = str(error)
    assert "subagents.toml: limits.max_thread: expected one of the keys in [limits]" in message
    assert "Did you mean 'limits.max_threads'?" in message
    assert "Valid keys in [limits]: max_threads, max_depth" in message
    assert error.line == 2


def test_a_section_key_at_the_top_level_points_to_its_section(dirs: Dirs) -> None:
    write(dirs.user_file, "max_threads = 3\n")
    assert "Did you mean 'limits.max_threads'?" in str(error_of(dirs))
    write(dirs.user_file, "modle = 'x'\n")
    message = str(error_of(dirs))
    assert "Did you mean 'model'?" in message
    assert "Valid keys at the top level: state_dir, provider, model" in message


def test_toml_syntax_error_names_file_and_line(dirs: Dirs) -> None:
    write(dirs.project_file, "[limits]\nmax_threads = 3\nmax_depth 2\n")
    error = error_of(dirs)
    assert error.line == 3
    assert error.path == dirs.project_file
    assert str(error).startswith(f"{dirs.project_file}: line 3: invalid TOML")


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("model = 'x'\nx = " + "1" * 5000 + "\n", "digits"),  # plain ValueError in tomllib
        ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "nests too deeply"),  # RecursionError
    ],
)
def test_an_unreadable_toml_value_is_a_config_error_naming_the_file(
    dirs: Dirs, text: str, detail: str
) -> None:
    write(dirs.project_file, text)
    for trusted in (True, False):
        error = error_of(dirs, trust_project=trusted)
        assert error.path == dirs.project_file
        assert str(error).startswith(f"{dirs.project_file}: a TOML value cannot be read")
        assert detail in str(error)


def test_unreadable_or_undecodable_files(dirs: Dirs) -> None:
    dirs.user_file.mkdir()
    assert "cannot read the file" in str(error_of(dirs))
    dirs.user_file.rmdir()
    dirs.user_file.write_bytes(b"model = '\xff'\n")
    error = error_of(dirs)
    assert error.path == dirs.user_file
    assert "UTF-8" in str(error) or "utf-8" in str(error)


@pytest.mark.parametrize(
    ("env", "variable", "expected"),
    [
        ({"SUBAGENTS_MAX_THREADS": "eight"}, "SUBAGENTS_MAX_THREADS", "whole number of at least 1"),
        ({"SUBAGENTS_LIMITS__MAX_DEPTH": "-2"}, "SUBAGENTS_LIMITS__MAX_DEPTH", "at least 0"),
        (
            {"SUBAGENTS_TRANSCRIPTS__ENABLED": "maybe"},
            "SUBAGENTS_TRANSCRIPTS__ENABLED",
            "true or false",
        ),
        ({"SUBAGENTS_LIMITS__CANCEL_TIMEOUT": "nan"}, "SUBAGENTS_LIMITS__CANCEL_TIMEOUT", "finite"),
        ({"SUBAGENTS_PROVIDER": "openai"}, "SUBAGENTS_PROVIDER", "one of"),
        ({"SUBAGENTS_HOOKS": "{not json"}, "SUBAGENTS_HOOKS", "a JSON object"),
        ({"SUBAGENTS_MODEL_ALIASES": "[1]"}, "SUBAGENTS_MODEL_ALIASES", "a JSON object"),
        ({"SUBAGENTS_TRUSTED_SOURCES": "[1, 2"}, "SUBAGENTS_TRUSTED_SOURCES", "agent sources"),
        ({"SUBAGENTS_HOOKS": '{"PreToolUse": 1}'}, "SUBAGENTS_HOOKS", "must be a list"),
    ],
)
def test_bad_environment_values_name_the_variable(
    dirs: Dirs, env: dict[str, str], variable: str, expected: str
) -> None:
    error = error_of(dirs, env=env)
    assert error.variable == variable
    assert error.path is None
    assert str(error).startswith(f"environment variable {variable}: ")
    assert expected in str(error)
    assert f"Fix or unset {variable}." in str(error)


def test_two_variables_for_one_key_must_agree(dirs: Dirs) -> None:
    same = {"SUBAGENTS_MAX_THREADS": "3", "SUBAGENTS_LIMITS__MAX_THREADS": "3"}
    assert dirs.load(env=same).limits.max_threads == 3
    error = error_of(dirs, env={"SUBAGENTS_MAX_THREADS": "3", "SUBAGENTS_LIMITS__MAX_THREADS": "4"})
    assert "SUBAGENTS_LIMITS__MAX_THREADS" in str(error)
    assert "SUBAGENTS_MAX_THREADS" in str(error)


def test_bad_code_overrides(dirs: Dirs) -> None:
    error = error_of(dirs, overrides={"limits": {"max_threads": "4"}})
    assert str(error).startswith("overrides from code: limits.max_threads: expected")
    assert error.path is None
    error = error_of(dirs, overrides={"limits.wait_min_second": 1})
    assert "Did you mean 'limits.wait_min_seconds'?" in str(error)
    error = error_of(dirs, overrides=["not", "a", "mapping"])
    assert "a mapping of settings" in str(error)


def test_a_cross_field_error_blames_the_value_that_was_set(dirs: Dirs) -> None:
    write(dirs.project_file, "[limits]\nwait_max_seconds = 10\n")
    error = error_of(dirs)
    assert error.key == "limits.wait_max_seconds"
    assert error.path == dirs.project_file
    assert error.line == 2
    assert "makes limits.wait_default_seconds invalid" in str(error)
    config = dirs.load(env={"SUBAGENTS_WAIT_DEFAULT_SECONDS": "10"})
    assert config.limits.wait_default_seconds == 10.0
    error = error_of(dirs, overrides={"limits": {"wait_min_seconds": 20}})
    assert error.key == "limits.wait_min_seconds"
    assert error.origin == "overrides from code"


def test_secrets_in_a_wrong_value_are_not_shown(dirs: Dirs) -> None:
    key = "sk-ant-api03-" + "A" * 40
    write(dirs.project_file, f"provider = '{key}'\n")
    with pytest.raises(ConfigError) as info:
        dirs.load()
    assert key not in str(info.value)
    assert "[REDACTED]" in str(info.value)


# --------------------------------------------------------------------------- never a crash

_KEYS = st.sampled_from(
    [*RuntimeConfig().flat(), "limits", "hooks", "model_aliases", "logging", "transcripts",
     "model_aliases.fast", "hooks.PreToolUse", "hooks.Stop", "nope", "limits.nope", ""]
)  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["auto", "info", "memory", "builtin", "Bash", "command", "~", "."])
)
_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["matcher", "hooks", "type", "command", "timeout", "max_threads", "x"])
            | st.text(max_size=5),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(overrides=st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_random_overrides_give_a_config_or_a_config_error(
    dirs: Dirs, overrides: dict[str, Any]
) -> None:
    result = outcome(dirs, overrides=overrides)
    if isinstance(result, ConfigError):
        assert str(result).startswith("overrides from code: ")
    else:
        assert result.sources.keys() == result.flat().keys()


_ENV_NAMES = st.sampled_from(
    [*env_variable_names(), "SUBAGENTS_MODEL_ALIASES__X", "SUBAGENTS_", "SUBAGENTS_Q"]
)
_ENV_TEXT = st.text(max_size=10) | st.sampled_from(
    ["1", "0", "-1", "1e400", "nan", "true", "[]", "{}", '{"a": 1}', '["builtin"]', "a,b", "~/x"]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(env=st.dictionaries(_ENV_NAMES, _ENV_TEXT, max_size=4))
def test_random_environment_gives_a_config_or_a_config_error(
    dirs: Dirs, env: dict[str, str]
) -> None:
    result = outcome(dirs, env=env)
    if isinstance(result, ConfigError):
        assert result.variable in env


_TOML_LINES = st.sampled_from(
    [
        "[limits]", "[logging]", "[hooks]", "[model_aliases]", "[[limits]]", "[nope]",
        "max_threads = 3", "max_threads = 'x'", "stderr_level = 'debug'", "fast = 'id'",
        "model = 'opus'", "PreToolUse = []", "PreToolUse = [{hooks = []}]", "x = ", "= 1",
        "limits.max_depth = 2", "a.b.c = 1", "'quoted' = 1", "json_file = false",
    ]
) | st.text(alphabet=string.printable, max_size=20)  # fmt: skip


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_TOML_LINES, max_size=6))
def test_random_toml_gives_a_config_or_a_config_error(dirs: Dirs, lines: list[str]) -> None:
    write(dirs.project_file, "\n".join(lines))
    result = outcome(dirs)
    if isinstance(result, ConfigError):
        assert result.path == dirs.project_file


# --------------------------------------------------------------------------- env_passthrough


def test_env_passthrough_names_secret_variables_for_bash_and_hooks(dirs: Dirs) -> None:
    assert dirs.load().env_passthrough == frozenset()
    write(dirs.user_file, 'env_passthrough = ["GITHUB_TOKEN"]\n')
    assert dirs.load().env_passthrough == {"GITHUB_TOKEN"}
    config = dirs.load(env={"SUBAGENTS_ENV_PASSTHROUGH": "NPM_TOKEN, PGPASSWORD"})
    assert config.env_passthrough == {"NPM_TOKEN", "PGPASSWORD"}
    assert config.sources["env_passthrough"] == "env SUBAGENTS_ENV_PASSTHROUGH"
    assert config.flat()["env_passthrough"] == ["NPM_TOKEN", "PGPASSWORD"]


@pytest.mark.parametrize("value", ["'GITHUB_TOKEN'", "['A=B']", "[1]"])
def test_env_passthrough_must_be_a_list_of_names(dirs: Dirs, value: str) -> None:
    write(dirs.project_file, f"env_passthrough = {value}\n")
    error = error_of(dirs)
    assert error.key == "env_passthrough"
    assert "a list of environment variable names" in str(error)
