"""``subagents resume ID [PROMPT]``: bring an agent back from its transcript and watch it.

The agent is rebuilt from its transcript on the same state directory, with its
id, nickname, type, model and whole conversation. With PROMPT it runs on it;
without one it carries on if it was stopped mid-run (Ctrl-C, a crash), and
otherwise comes back idle with the result of its last run. The output is the
same as ``subagents run``'s: a live view on a terminal, plain lines otherwise,
every bus event as a JSON line with ``--json``; the first Ctrl-C, SIGTERM or
SIGHUP stops it cleanly (exit code 130, 143 or 129).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from subagents.cli._run import (
    Outcome,
    agents_json,
    base_overrides,
    check_cwd,
    execute,
    fail,
    wait_final,
)
from subagents.cli._transcripts import not_found_message
from subagents.cli._trust import add_trust_flag, decide_trust
from subagents.runtime import (
    Runtime,
    RuntimeConfig,
    TranscriptNotFound,
    find_transcript,
    load_config,
)

__all__ = ["add_resume_command"]


def add_resume_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``resume`` on the ``subagents`` command's subparsers."""
    resume = commands.add_parser(
        "resume",
        help="bring an agent back from its transcript; it carries on or runs on a new prompt",
        description=(
            "The agent is rebuilt from its transcript, with its id, nickname, type, model\n"
            "and whole conversation. With PROMPT it runs on it; without one it carries on\n"
            "if it was stopped mid-run (Ctrl-C, a crash), and otherwise comes back idle\n"
            "with the result of its last run. The output is that of `subagents run`; the\n"
            "exit code is 0 when the agent's last run succeeded, 1 otherwise, 130 after\n"
            "Ctrl-C (143 after SIGTERM, 129 after SIGHUP). Give the --cwd and --state-dir\n"
            "it ran with: its tools work in --cwd."
        ),
        epilog=(
            "examples:\n"
            "  subagents transcripts list                # find the agent's id\n"
            "  subagents resume 2f523ae1-2               # carry on after Ctrl-C\n"
            '  subagents resume 2f523ae1-1 "Which folder has the most tests?"\n'
            "  subagents resume 2f523ae1-2 --cwd ~/code/app --state-dir ./state --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    resume.add_argument("agent_id", metavar="ID", help="the agent's id (see transcripts list)")
    resume.add_argument(
        "prompt",
        metavar="PROMPT",
        nargs="?",
        help="its next input (default: none; it carries on, or comes back idle)",
    )
    resume.add_argument(
        "--cwd", type=Path, metavar="DIR", help="working directory, as in the run (default: .)"
    )
    resume.add_argument(
        "--state-dir", type=Path, metavar="DIR", help="where the transcripts are (as in the run)"
    )
    resume.add_argument(
        "--provider",
        choices=("scripted", "anthropic"),
        help="default: anthropic when ANTHROPIC_API_KEY is set, scripted otherwise",
    )
    resume.add_argument(
        "--agents",
        dest="agents_json",
        metavar="JSON",
        help="agent types given on the command line (as given to the run)",
    )
    resume.add_argument("--json", action="store_true", help="every bus event as a JSON line")
    resume.add_argument("--yes", action="store_true", help="approve every tool request")
    resume.add_argument("-v", "--verbose", action="count", default=0, help="log to stderr")
    add_trust_flag(resume)
    resume.set_defaults(func=_resume_command)


def _resume_command(args: argparse.Namespace) -> int:
    cwd, problem = check_cwd(args)
    if problem is not None:
        return fail("resume", problem)
    env = dict(os.environ)
    if args.provider == "anthropic" and not env.get("ANTHROPIC_API_KEY", "").strip():
        return fail("resume", "--provider anthropic needs ANTHROPIC_API_KEY in the environment.")
    try:
        agents = agents_json(args.agents_json)
    except ValueError as exc:
        return fail("resume", str(exc))
    overrides = base_overrides(args)
    agent_id: str = args.agent_id
    trusted = decide_trust("resume", args, cwd, env, agents)

    def configure() -> RuntimeConfig:
        config = load_config(cwd=cwd, env=env, overrides=overrides, trust_project=trusted)
        try:  # before the runtime opens: an unknown id fails fast, in one line
            find_transcript(config.state_dir, agent_id)
        except TranscriptNotFound:
            raise _NotFound(not_found_message(agent_id, config.state_dir)) from None
        return config

    async def body(rt: Runtime, outcome: Outcome) -> None:
        await rt.resume(agent_id, args.prompt)
        outcome.lead_id = agent_id  # once it has a record: the summary reads its transcript
        await wait_final(rt, agent_id)

    try:
        return execute("resume", args, configure, cwd, env, agents, body)
    except _NotFound as exc:
        return fail("resume", str(exc), 1)


class _NotFound(Exception):
    """Raised instead of a :class:`TranscriptNotFound`, to say it in one line."""
