"""Workspace trust: the trust store, what an untrusted project file may set, and its agents."""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from subagents._small_file import FileRefused, read_small_file
from subagents.agents import AgentSource, ApprovalMode, PermissionMode, discover_agents
from subagents.runtime import (
    UNTRUSTED_PROJECT_KEYS,
    ConfigError,
    TrustStore,
    check_project_trust,
    load_config,
    load_trust_store,
    project_folder,
    restrict_catalog,
    trust_notice,
)

# --------------------------------------------------------------------------- the store


def test_an_absent_store_trusts_nothing(tmp_path: Path) -> None:
    store = load_trust_store(tmp_path)
    assert store.folders == ()
    assert store.problem is None
    assert not store.trusts(tmp_path)


def test_trust_covers_subfolders_but_not_siblings_with_a_common_prefix(tmp_path: Path) -> None:
    (tmp_path / "app" / "src").mkdir(parents=True)
    (tmp_path / "app-evil").mkdir()
    load_trust_store(tmp_path).with_folder(tmp_path / "app").save()
    store = load_trust_store(tmp_path)
    assert store.trusts(tmp_path / "app")
    assert store.trusts(tmp_path / "app" / "src")
    assert not store.trusts(tmp_path / "app-evil")
    assert not store.trusts(tmp_path)
    assert not store.trusts(tmp_path / "app" / ".." / "app-evil")


def test_symlinks_are_resolved_when_stored_and_when_checked(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    (real / "out").symlink_to(tmp_path)  # a link out of the trusted folder
    load_trust_store(tmp_path).with_folder(tmp_path / "alias").save()
    store = load_trust_store(tmp_path)
    assert [f.path for f in store.folders] == [real.resolve()]
    assert store.trusts(real)
    assert not store.trusts(real / "out")


def test_revoke_and_save_are_atomic_and_leave_no_temporary_file(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    store = load_trust_store(tmp_path).with_folder(folder)
    assert store.with_folder(folder) is store  # already trusted: unchanged
    store.save()
    load_trust_store(tmp_path).without_folder(folder).save()
    assert load_trust_store(tmp_path).folders == ()
    assert sorted(p.name for p in (tmp_path / ".subagents").iterdir()) == ["trusted-folders.json"]


@pytest.mark.parametrize(
    "content",
    [b"not json", b'{"folders": 3}', b'{"folders": [{"path": 1}]}', b"\xff\xfe", b"[]"],
)
def test_a_corrupt_store_is_reported_and_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / ".subagents" / "trusted-folders.json"
    path.parent.mkdir()
    path.write_bytes(content)
    store = load_trust_store(tmp_path)
    assert store.folders == ()
    assert store.problem is not None
    assert str(path) in store.problem


def test_a_store_that_is_not_a_file_is_reported_and_empty(tmp_path: Path) -> None:
    path = tmp_path / ".subagents" / "trusted-folders.json"
    path.parent.mkdir()
    os.mkfifo(path)
    store = load_trust_store(tmp_path)
    assert store.folders == ()
    assert "FIFO" in (store.problem or "")


def test_relative_and_duplicate_entries_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / ".subagents" / "trusted-folders.json"
    path.parent.mkdir()
    entries = [{"path": "relative"}, {"path": str(tmp_path)}, {"path": str(tmp_path) + "/"}]
    path.write_text(json.dumps({"version": 1, "folders": entries}))
    assert [f.path for f in load_trust_store(tmp_path).folders] == [tmp_path.resolve()]


@given(parts=st.lists(st.text("abc.-_", min_size=1, max_size=4), max_size=4))
def test_any_path_below_a_trusted_folder_is_trusted(parts: list[str]) -> None:
    root = Path("/srv/trusted")
    store = TrustStore(Path("/nonexistent/store.json")).with_folder(root)
    below = root.joinpath(*[p for p in parts if p not in (".", "..")])
    assert store.trusts(below)
    assert not store.trusts(Path("/srv/trusted-not") / below.relative_to(root))


def test_the_project_folder_is_the_git_root_else_the_folder(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    assert project_folder(tmp_path / "repo" / "a" / "b") == (tmp_path / "repo").resolve()
    (tmp_path / "loose").mkdir()
    assert project_folder(tmp_path / "loose") == (tmp_path / "loose").resolve()


# --------------------------------------------------------------------------- the project file


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "subagents.toml").write_text(
        'state_dir = "/tmp/elsewhere"\ntrusted_sources = ["builtin", "project", "user"]\n'
        'model = "opus"\n[transcripts]\nretention_days = 1\nenabled = false\n'
        '[hooks]\nPreToolUse = [{ hooks = [{ type = "command", command = "true" }] }]\n'
    )
    (tmp_path / "home" / ".subagents").mkdir(parents=True)
    return root


def test_an_untrusted_project_file_keeps_only_its_harmless_settings(project: Path) -> None:
    home = project.parent / "home"
    config = load_config(cwd=project, home=home, env={})
    assert config.project is not None
    assert not config.project.trusted
    assert config.state_dir == home / ".subagents" / "state"
    assert config.transcripts.retention_days == 30
    assert config.hooks == {}
    assert config.trusted_sources == {"builtin", "plugin", "user", "project", "cli"}
    # The repository's own agents may not write or execute; the user's may.
    trust = config.trust_policy()
    assert not trust.trusts("project")
    assert "is not trusted (to trust it: subagents trust" in trust.withheld["project"]
    assert trust.trusts("user")
    assert trust.trusts("plugin")
    # What cannot run, delete or send anything still applies.
    assert config.model == "opus"
    assert config.transcripts.enabled is False
    assert set(config.project.ignored) == {
        "subagents.toml hooks",
        "subagents.toml state_dir",
        "subagents.toml transcripts.retention_days",
        "subagents.toml trusted_sources",
    }
    assert config.sources["state_dir"] == "default"


def test_user_env_and_code_settings_are_trusted_in_an_untrusted_project(project: Path) -> None:
    home = project.parent / "home"
    (home / ".subagents" / "config.toml").write_text(
        'state_dir = "/tmp/user-state"\n'
        '[hooks]\nPreToolUse = [{ hooks = [{ type = "command", command = "mine" }] }]\n'
    )
    config = load_config(
        cwd=project,
        home=home,
        env={"SUBAGENTS_TRANSCRIPTS__RETENTION_DAYS": "7"},
        overrides={"trusted_sources": ["builtin"]},
    )
    assert config.state_dir == Path("/tmp/user-state")
    assert config.hooks["PreToolUse"][0]["hooks"][0]["command"] == "mine"
    assert config.transcripts.retention_days == 7
    assert config.trusted_sources == {"builtin"}


def test_a_trusted_project_file_applies_in_full(project: Path) -> None:
    home = project.parent / "home"
    load_trust_store(home).with_folder(project).save()
    config = load_config(cwd=project, home=home, env={})
    assert config.project is not None
    assert config.project.trusted
    assert config.project.ignored == ()
    assert config.state_dir == Path("/tmp/elsewhere")
    assert config.transcripts.retention_days == 1
    assert "PreToolUse" in config.hooks
    # Its trusted_sources (builtin, project, user) applies: its agents may write and execute.
    assert config.trust_policy().trusts("project")
    assert config.trust_policy().withheld == {}


def test_every_untrusted_key_is_a_real_setting() -> None:
    config = load_config(cwd=Path("/"), home=Path("/nonexistent"), env={})
    flat = config.flat()
    for key in UNTRUSTED_PROJECT_KEYS:
        # (the free tables are empty by default, so they have no dotted key in flat())
        table = key in ("hooks", "mcp_servers") and hasattr(config, key)
        assert key in flat or any(k.startswith(key + ".") for k in flat) or table, key


def test_a_huge_project_file_is_reported_not_read(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "subagents.toml").write_bytes(b"#" * (2 << 20))
    config = load_config(cwd=tmp_path, home=tmp_path / "home", env={})
    assert len(config.warnings) == 1
    assert "bytes" in config.warnings[0]


def test_a_user_file_that_is_a_fifo_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "home" / ".subagents").mkdir(parents=True)
    os.mkfifo(tmp_path / "home" / ".subagents" / "config.toml")
    with pytest.raises(ConfigError, match="FIFO"):
        load_config(cwd=tmp_path, home=tmp_path / "home", env={})


def test_read_small_file_refuses_devices_and_bounds_the_read(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match="character device"):
        read_small_file(Path("/dev/zero"), 10)
    (tmp_path / "f").write_bytes(b"12345")
    assert read_small_file(tmp_path / "f", 5) == b"12345"
    with pytest.raises(FileRefused, match="more than"):
        read_small_file(tmp_path / "f", 4)


# --------------------------------------------------------------------------- agent definitions


def _agent(root: Path, name: str, extra: str) -> None:
    folder = root / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: d\n{extra}---\nPrompt.\n", encoding="utf-8"
    )


HOOKS = "hooks:\n  SubagentStart:\n    - hooks:\n        - type: command\n          command: x\n"


def test_restricting_drops_project_hooks_and_auto_approval_only(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "project"
    _agent(home, "mine", HOOKS + "permissionMode: bypassPermissions\n")
    _agent(root, "Explore", HOOKS)
    _agent(root, "bypass", "permissionMode: bypassPermissions\n")
    _agent(root, "planner", "permissionMode: plan\n")
    catalog = discover_agents(cwd=root, home=home)
    restricted = restrict_catalog(catalog)
    defs = restricted.catalog.definitions
    assert defs["Explore"].source is AgentSource.PROJECT
    assert defs["Explore"].hooks == ()
    assert defs["bypass"].permission_mode is None
    assert defs["bypass"].approval_mode is ApprovalMode.ROUTE_TO_PARENT
    assert defs["planner"] == catalog.definitions["planner"]  # plan mode only restricts
    assert defs["mine"] is catalog.definitions["mine"]  # the user's own: untouched
    assert defs["mine"].permission_mode is PermissionMode.BYPASS_PERMISSIONS
    assert restricted.catalog.candidates["Explore"][-1] is defs["Explore"]
    assert set(restricted.ignored) == {
        "the hooks of agent Explore",
        "the auto-approval of agent bypass",
    }


def test_check_project_trust_lists_what_trust_would_change(project: Path) -> None:
    home = project.parent / "home"
    _agent(project, "Explore", HOOKS)
    check = check_project_trust(cwd=project, home=home, env={})
    assert not check.trusted
    assert "the hooks of agent Explore" in check.ignored
    assert "subagents.toml hooks" in check.ignored
    load_trust_store(home).with_folder(project).save()
    assert check_project_trust(cwd=project, home=home, env={}).trusted


def test_the_notice_is_one_line_with_a_command_that_can_be_pasted(tmp_path: Path) -> None:
    plain = trust_notice(tmp_path / "my repo", ["subagents.toml hooks", "subagents.toml hooks"])
    assert plain.count("subagents.toml hooks") == 1
    assert f"subagents trust '{tmp_path}/my repo'" in plain
    hostile = trust_notice(tmp_path / "it's\nrm -rf ~\x1b]52;c;x\x07", ["x"])
    assert hostile.isprintable()  # one line, no escape sequence reaches the terminal
    assert "subagents trust $'" in hostile
    assert "\\n" in hostile
    assert "\\x1b" in hostile
    assert attrs.has(TrustStore)


def test_an_untrusted_project_cannot_open_webfetch_to_private_addresses(project: Path) -> None:
    """A repository could aim WebFetch at the cloud metadata address: only the user decides."""
    home = project.parent / "home"
    (project / "subagents.toml").write_text("[web]\nallow_private_addresses = true\n")
    config = load_config(cwd=project, home=home, env={})
    assert config.web.allow_private_addresses is False
    assert config.project is not None
    assert config.project.ignored == ("subagents.toml web.allow_private_addresses",)
    (home / ".subagents" / "config.toml").write_text("[web]\nallow_private_addresses = true\n")
    (project / "subagents.toml").unlink()
    assert load_config(cwd=project, home=home, env={}).web.allow_private_addresses is True
