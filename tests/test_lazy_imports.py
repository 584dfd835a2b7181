"""A process pays at start only for what it uses.

The MCP SDK (over half a second to import), the HTML converter of WebFetch, and
``trio.testing`` (which imports pytest) are imported where they are used. Every
``subagents`` command, and every Ray worker that opens a runtime, starts without
them: ``subagents --help`` went from about 2 s to under 1 s on this machine.
"""

from __future__ import annotations

import json
import subprocess
import sys

#: Modules no plain start needs: each is imported on first use.
HEAVY = ("mcp", "bs4", "markdownify", "pytest", "trio.testing")


def test_the_cli_and_the_runtime_import_without_the_heavy_optional_modules() -> None:
    code = (
        "import json, sys\n"
        "import subagents.cli, subagents.runtime, subagents.tools, subagents.jobs\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == []
