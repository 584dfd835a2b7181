"""Checking a project before a run: is its folder trusted, and what would trust change?

The command line asks this before it opens a runtime, to prompt on a terminal
(or print a one-line notice) only when the project has something that an
untrusted folder has ignored: hooks, a state_dir, retention, an agent's hooks
or auto-approval, a plugin its settings enable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from subagents.agents import discover_agents
from subagents.runtime._config.loader import load_config
from subagents.runtime._config.trust import ProjectTrust, restrict_catalog
from subagents.runtime._config.trusted_folders import load_trust_store, project_folder

__all__ = ["check_project_trust"]


def check_project_trust(
    *,
    cwd: str | os.PathLike[str],
    home: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    agents_json: str | None = None,
) -> ProjectTrust:
    """Whether the user trusts the project of ``cwd``, and what is ignored while it is not.

    ``trusted`` is the trust store's answer; ``ignored`` lists what the
    project's files set that an untrusted folder has ignored (whether or not
    it is trusted now), empty when trust would change nothing. Raises
    :class:`~subagents.runtime.ConfigError` for a settings file that is wrong.
    """
    home_dir = Path.home() if home is None else Path(home)
    root = Path(os.path.abspath(cwd))
    config = load_config(cwd=root, home=home_dir, env=env, trust_project=False)
    catalog = discover_agents(
        cwd=root,
        home=home_dir,
        agents_json=agents_json,
        aliases=config.alias_table(),
        trusted_project=False,
    )
    ignored = (
        *(config.project.ignored if config.project else ()),
        *catalog.withheld,
        *restrict_catalog(catalog).ignored,
    )
    folder = project_folder(root)
    return ProjectTrust(folder, load_trust_store(home_dir).trusts(folder), tuple(ignored))
