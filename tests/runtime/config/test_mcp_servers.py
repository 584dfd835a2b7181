"""``[mcp_servers.NAME]`` in our config files, in Codex's shape (codex-rs ``McpServerConfig``:
``command``, ``args``, ``env``, ``cwd``, ``startup_timeout_sec``, ``tool_timeout_sec``; and
``McpServerTransportConfig::StreamableHttp``: ``url``, ``http_headers``,
``bearer_token_env_var``, ``env_http_headers``), checked once, merged server by server,
and left out of an untrusted project file."""

from __future__ import annotations

from pathlib import Path

import pytest

from subagents.runtime import ConfigError, load_config


def _user(home: Path, text: str) -> None:
    (home / ".subagents").mkdir(parents=True, exist_ok=True)
    (home / ".subagents" / "config.toml").write_text(text)


def test_a_server_table_becomes_a_server_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _user(
        home,
        '[mcp_servers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
        'env = { TZ = "UTC" }\ntool_timeout_sec = 5\n',
    )
    config = load_config(cwd=tmp_path, home=home, env={})
    (server,) = config.mcp_server_configs()
    assert (server.name, server.command, server.args) == ("time", "uvx", ("mcp-server-time",))
    assert dict(server.env) == {"TZ": "UTC"}
    assert server.call_timeout == 5.0
    assert config.sources["mcp_servers.time"].endswith("config.toml")


def test_a_url_table_becomes_a_streamable_http_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _user(
        home,
        '[mcp_servers.figma]\nurl = "https://mcp.example.com/mcp"\n'
        'bearer_token_env_var = "FIGMA_TOKEN"\n'
        'http_headers = { "X-Team" = "design" }\n'
        'env_http_headers = { "X-Org" = "FIGMA_ORG" }\n',
    )
    config = load_config(cwd=tmp_path, home=home, env={})
    (server,) = config.mcp_server_configs()
    assert (server.name, server.transport, server.url) == (
        "figma",
        "http",
        "https://mcp.example.com/mcp",
    )
    assert server.command is None
    assert dict(server.headers) == {"X-Team": "design"}
    assert server.bearer_token_env_var == "FIGMA_TOKEN"
    assert dict(server.env_headers) == {"X-Org": "FIGMA_ORG"}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('args = ["x"]\n', "needs a 'command'"),
        ('command = "x"\ncomand = "y"\n', "unknown key(s) comand"),
        ('command = "x"\ntool_timeout_sec = 0\n', "tool_timeout_sec"),
        ('command = "x"\ntype = "sse"\n', "not supported"),
        ('url = "ftp://h/mcp"\n', "http:// or https://"),
        ('url = "https://h/mcp"\nargs = ["x"]\n', "args apply only to a 'command' server"),
        ('url = "https://h/mcp"\nbearer_token_env_var = 1\n', "bearer_token_env_var"),
    ],
)
def test_a_bad_server_is_a_config_error_naming_it(tmp_path: Path, body: str, reason: str) -> None:
    home = tmp_path / "home"
    _user(home, "[mcp_servers.time]\n" + body)
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, home=home, env={})
    assert "mcp_servers.time" in str(caught.value)
    assert reason in str(caught.value)


def test_an_untrusted_project_file_starts_no_server(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "subagents.toml").write_text('[mcp_servers.evil]\ncommand = "sh"\n')
    config = load_config(cwd=project, home=tmp_path / "home", env={}, trust_project=False)
    assert config.mcp_server_configs() == ()
    trusted = load_config(cwd=project, home=tmp_path / "home", env={}, trust_project=True)
    assert [s.name for s in trusted.mcp_server_configs()] == ["evil"]
