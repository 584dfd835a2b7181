"""README's "MCP servers" example runs as written: its .mcp.json, agent file and output.

The ``.mcp.json`` and the agent file are taken from README.md, the commands run
in process, and the trimmed ``subagents tools list --json`` output shown there
must be what the command prints (the MCP rows and the servers).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from subagents.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def _section() -> str:
    text = README.read_text()
    start = text.index("### MCP servers\n")
    return text[start : text.index("\n### ", start + 1)]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)


def test_the_readme_mcp_example_runs_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mcp_server_time")
    bin_dir = os.path.dirname(sys.executable)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    if shutil.which("mcp-server-time") is None:
        pytest.skip("the mcp-server-time script is not installed beside this Python")
    section = _section()
    (mcp_json,) = _blocks(section, "json")
    (agent,) = _blocks(section, "markdown")
    (shell,) = _blocks(section, "sh")
    project, home = tmp_path / "app", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    (project / ".claude" / "agents").mkdir(parents=True)
    home.mkdir()
    (project / ".mcp.json").write_text(mcp_json)
    (project / ".claude" / "agents" / "clock.md").write_text(agent)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    assert "$ subagents trust\n" in shell
    assert main(["trust"]) == 0
    capsys.readouterr()
    command, _, shown = shell.partition("# trimmed to the MCP rows\n")
    assert command.rstrip().endswith("subagents tools list --agent clock --json")
    assert main(["tools", "list", "--agent", "clock", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    printed["tools"] = [
        row for row in printed["tools"] if row["source"].startswith("mcp:") or "Mcp" in row["name"]
    ]
    assert printed == json.loads(shown)
