"""The ``subagents`` command.

``subagents run PROMPT`` runs a lead agent and its team with a live view;
``subagents resume ID [PROMPT]`` brings an agent back from its transcript;
``subagents transcripts list|show ID`` reads the transcripts;
``subagents jobs run|list|show|resume|cancel`` runs one agent per row of a
CSV or JSONL file, durably;
``subagents demo [DIR]`` shows the actor kernel at work on a directory;
``subagents agents list|show|validate`` reads agent definitions as Claude Code
does and reports what it made of every field;
``subagents tools list`` shows every tool an agent would get, and why not the others;
``subagents trust [PATH]`` lets a folder's own files run hooks (see ``--list``);
``subagents bench`` measures the runtime against raw Trio (and asyncio and
autogen-core when installed), from a checkout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from subagents import demo as _demo
from subagents._visible import visible as _visible
from subagents.cli import (
    _agents,
    _bench,
    _jobs,
    _resume,
    _run,
    _team,
    _tools,
    _transcripts,
    _trust,
)

__all__ = ["build_parser", "main"]


def _demo_command(args: argparse.Namespace) -> int:
    root: Path = args.dir
    if not root.is_dir():
        print(
            f"subagents demo: {_visible(str(root))} is not a directory; give a folder to survey.",
            file=sys.stderr,
        )
        return 2
    if args.max_threads < 1:
        print("subagents demo: --max-threads must be at least 1.", file=sys.stderr)
        return 2
    return _demo.run_demo(root, max_threads=args.max_threads, out=sys.stdout)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``subagents`` command."""
    parser = argparse.ArgumentParser(
        prog="subagents",
        description="LLM subagents as supervised Trio actors.",
        epilog=(
            "examples:\n"
            '  subagents run "Survey this repository"\n'
            "  subagents transcripts list\n"
            "  subagents resume 2f523ae1-1\n"
            '  subagents jobs run rows.csv --agent Explore --prompt "Review {path}"\n'
            "  subagents agents list\n"
            "  subagents tools list --agent Explore\n"
            "  subagents demo ~/code/app\n"
            "\n"
            "`subagents COMMAND --help` says more about each command."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _run.add_run_command(commands)
    _team.add_team_command(commands)
    _resume.add_resume_command(commands)
    _transcripts.add_transcripts_commands(commands)
    _jobs.add_jobs_commands(commands)
    demo = commands.add_parser(
        "demo",
        help="survey a directory with supervised actors, showing their events live",
        description=(
            "A lead actor fans out one worker per top-level folder of DIR, at most "
            "--max-threads at once, and gathers their counts of files, lines and bytes."
        ),
        epilog=("examples:\n  subagents demo\n  subagents demo ~/code/app --max-threads 8"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("dir", nargs="?", type=Path, default=Path("."), help="default: .")
    demo.add_argument("--max-threads", type=int, default=4, metavar="N", help="default: 4")
    demo.set_defaults(func=_demo_command)
    _agents.add_agents_commands(commands)
    _tools.add_tools_command(commands)
    _trust.add_trust_command(commands)
    _bench.add_bench_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (``| head``): nothing more to say
        return 0
    return code
