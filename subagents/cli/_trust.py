"""``subagents trust``: which folders' own files may run commands, and the run's trust check.

A repository's ``subagents.toml`` hooks, state_dir and retention, and its
agent definitions' hooks and auto-approval, apply only in a folder the user
trusts. ``subagents trust [PATH]`` trusts a folder (default: the project of
the current one, its git root) and its subfolders; ``--list`` shows the
trusted folders, ``--revoke PATH`` takes trust back.

Before ``run`` and ``resume`` open a runtime, :func:`decide_trust` looks at
the project: trusted (or ``--trust-project``), it applies in full; untrusted
with nothing to ignore, nothing is said; untrusted with something to ignore, a
terminal gets a y/N question (no answer before the deadline, or end of input,
is no) and anything else a one-line notice on stderr. The run goes on either way.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TextIO

from subagents._visible import visible
from subagents.runtime import (
    ConfigError,
    ProjectTrust,
    check_project_trust,
    load_trust_store,
    project_folder,
    trust_notice,
)

__all__ = ["add_trust_command", "add_trust_flag", "decide_trust", "trust_line"]

#: Seconds the terminal question waits for an answer before it counts as no.
PROMPT_SECONDS: Final = 120.0


def add_trust_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``trust`` on the ``subagents`` command's subparsers."""
    trust = commands.add_parser(
        "trust",
        help="trust a folder: let its subagents.toml and agent files run hooks",
        description=(
            "A repository's own files (subagents.toml, .claude/agents) may run commands\n"
            "(hooks), choose where files are written and deleted (state_dir, retention)\n"
            "and approve tool calls by themselves only in a folder you trust. Trusting a\n"
            "folder covers its subfolders; the list is kept in ~/.subagents/trusted-folders.json."
        ),
        epilog=(
            "examples:\n"
            "  subagents trust                 # the current project (its git root)\n"
            "  subagents trust ~/code/app\n"
            "  subagents trust --list\n"
            "  subagents trust --revoke ~/code/app"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trust.add_argument(
        "path", metavar="PATH", nargs="?", type=Path, help="default: the current project"
    )
    action = trust.add_mutually_exclusive_group()
    action.add_argument("--list", action="store_true", help="show the trusted folders")
    action.add_argument("--revoke", metavar="PATH", type=Path, help="stop trusting PATH")
    trust.set_defaults(func=_trust_command)


def add_trust_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--trust-project`` to ``run`` or ``resume``."""
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="trust the project's own files for this run (see `subagents trust`)",
    )


def _home() -> Path:
    return Path.home()


def _fail(message: str, code: int = 2) -> int:
    print(f"subagents trust: {message}", file=sys.stderr)
    return code


def _trust_command(args: argparse.Namespace) -> int:
    store = load_trust_store(_home())
    if store.problem is not None:
        print(f"subagents trust: {store.problem}", file=sys.stderr)
    if args.list:
        if args.path is not None:
            return _fail("give either PATH or --list.")
        if not store.folders:
            print("No folder is trusted. `subagents trust PATH` trusts one.")
        for entry in store.folders:
            print(f"{visible(str(entry.path))}  (since {entry.trusted_at or 'unknown'})")
        return 0
    try:
        if args.revoke is not None:
            if args.path is not None:
                return _fail("give either PATH or --revoke PATH.")
            changed = store.without_folder(args.revoke)
            if changed == store:
                return _fail(f"{args.revoke} is not in the trusted folders (see --list).", 1)
            changed.save()
            print(f"No longer trusted: {visible(str(args.revoke.expanduser().resolve()))}")
            return 0
        if args.path is None:
            folder = project_folder(Path.cwd())
        else:
            if not args.path.expanduser().is_dir():
                return _fail(f"{args.path} is not a directory; give a folder to trust.")
            folder = args.path.expanduser().resolve()
        store.with_folder(folder).save()
    except OSError as exc:
        return _fail(f"cannot write {store.path}: {exc.strerror or exc}", 1)
    print(f"Trusted: {visible(str(Path(folder).resolve()))} (and its subfolders)")
    return 0


def _ask(notice: str, folder: Path, stream: TextIO, seconds: float) -> bool:
    """Ask on the terminal whether to trust ``folder``; no answer in time, or EOF, is no."""
    print(f"subagents: {notice}", file=sys.stderr)
    print(
        f"Trust {visible(str(folder))} and its subfolders? [y/N] ",
        end="",
        file=sys.stderr,
        flush=True,
    )
    try:
        ready, _, _ = select.select([stream], [], [], seconds)
    except (OSError, ValueError):
        ready = []
    answer = stream.readline() if ready else ""
    if not ready:
        print("(no answer: not trusted)", file=sys.stderr)
    return answer.strip().lower() in ("y", "yes")


def decide_trust(
    command: str,
    args: argparse.Namespace,
    cwd: Path,
    env: Mapping[str, str],
    agents_json: str | None,
) -> bool:
    """Whether ``run``/``resume`` trusts the project of ``cwd`` (asking or noting as needed).

    ``--trust-project`` trusts it for this run; a yes at the terminal question
    trusts it for good. A settings error is left for the command to report.
    """
    if getattr(args, "trust_project", False):
        return True
    home = _home()
    store = load_trust_store(home)
    if store.problem is not None:
        print(f"subagents {command}: {store.problem}", file=sys.stderr)
    if store.trusts(project_folder(cwd)):
        return True
    try:
        check = check_project_trust(cwd=cwd, home=home, env=env, agents_json=agents_json)
    except ConfigError:
        return False  # reported when the command loads its configuration
    if not check.ignored:
        return False
    notice = trust_notice(check.folder, check.ignored)
    if _interactive():
        if _ask(notice, check.folder, sys.stdin, PROMPT_SECONDS):
            try:
                store.with_folder(check.folder).save()
            except OSError as exc:
                print(
                    f"subagents {command}: trusted for this run only; cannot write "
                    f"{store.path}: {exc.strerror or exc}",
                    file=sys.stderr,
                )
            return True
        return False
    print(f"subagents {command}: {notice}", file=sys.stderr)
    return False


def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def trust_line(cwd: Path | None, home: Path | None) -> str:
    """One line for ``agents list``: whether the project is trusted, and what that changes."""
    try:
        check: ProjectTrust = check_project_trust(cwd=cwd or Path.cwd(), home=home, env=os.environ)
    except ConfigError as exc:
        return f"Project trust unknown: {exc}"
    shown = visible(str(check.folder))
    if check.trusted:
        return f"Project {shown}: trusted (`subagents trust --revoke` takes it back)."
    if not check.ignored:
        return f"Project {shown}: not trusted (its files ask for nothing that needs it)."
    return f"Project: {trust_notice(check.folder, check.ignored)}"
