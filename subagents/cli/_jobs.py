"""``subagents jobs``: one agent per row of a CSV or JSONL file, durable and resumable.

``subagents jobs run INPUT --agent NAME --prompt TEMPLATE`` runs an agent of
type NAME for every row of INPUT (a CSV with a header row, or JSON Lines with
one object per line), its prompt the template with each ``{column}`` filled
from the row (``{{`` and ``}}`` are literal braces). Every placeholder must
name a column: that, the file and the schema are checked before any row runs.
The output CSV has every input column, then ``job_id, item_id, status,
attempts, last_error, result_json, started_at, completed_at``. The job's
state is in SQLite in the state directory, so ``subagents jobs resume ID``
picks up a stopped or killed job without redoing a finished row.

Without an API key the scripted provider answers every row offline (set
``ANTHROPIC_API_KEY``, or ``--provider anthropic``, to use Claude). On a
terminal a progress bar shows the rows done, the rate and the time left;
without one, plain lines; with ``--json``, one JSON line per job event, then
a ``job_summary`` line. The first Ctrl-C (or SIGTERM, SIGHUP) stops the job
cleanly, its unfinished rows left pending for ``resume`` (exit code 130,
143, 129). Exit code 0 when every row completed, 1 when any failed, the job
was cancelled (``jobs cancel``) or could not run (another process runs it, a
backend that cannot start), 2 for a mistake on the command line or in the input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final

import trio
from rich.console import Console

from subagents._exceptions import SubagentsError
from subagents._visible import json_safe, visible
from subagents.actors import Bus
from subagents.agents import UnknownAgentError
from subagents.cli._formatting import plural
from subagents.cli._job_progress import JobWatch, open_job_progress
from subagents.cli._run import base_overrides, check_cwd, fail, leaves, one_line
from subagents.cli._signals import cancel_on_signals
from subagents.cli._trust import add_trust_flag, decide_trust
from subagents.jobs import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RUNTIME,
    JobInfo,
    JobInputError,
    JobSpec,
    JobSummary,
    UnknownJob,
    cancel_job,
    list_jobs,
    show_job,
)
from subagents.runtime import (
    Provider,
    Runtime,
    RuntimeConfig,
    ScriptedProvider,
    load_config,
    open_runtime,
)
from subagents.tools import ApprovalDecision, ApprovalRequest

__all__ = ["add_jobs_commands"]

#: The backends ``--backend`` names (``ray`` needs ``pip install 'subagents[ray]'``).
BACKENDS: Final = ("local", "ray")
#: The exit code of a mistake on the command line or in the job's input.
_USAGE: Final = 2
#: What ``subagents jobs --help`` and ``jobs run --help`` say the command does.
_DESCRIPTION: Final = (
    "Run an agent of type NAME for every row of INPUT (a CSV file with a header row, or\n"
    "JSON Lines, one object per line), its prompt TEMPLATE with each {column} filled from\n"
    "the row ({{ and }} are literal braces). The file, the template and the schema are\n"
    "checked before any row runs. The output CSV has every input column, then job_id,\n"
    "item_id, status, attempts, last_error, result_json, started_at, completed_at. The\n"
    "job's state is in SQLite in the state directory: `subagents jobs resume ID` goes on\n"
    "with a stopped or killed job without running a finished row again."
)


def add_jobs_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``jobs run|list|show|resume|cancel`` on the command's subparsers."""
    jobs = commands.add_parser(
        "jobs",
        help="run one agent per row of a CSV or JSONL file, durably (list, show, resume, cancel)",
        description=_DESCRIPTION,
        epilog=(
            "examples:\n"
            "  subagents jobs run tickets.csv --agent general-purpose \\\n"
            '      --prompt "Classify ticket {id}: {text}" --output labels.csv\n'
            "  subagents jobs run files.jsonl --agent Explore --prompt 'Review {path}' --json\n"
            "  subagents jobs list\n"
            "  subagents jobs show JOB_ID\n"
            "  subagents jobs resume JOB_ID\n"
            "  subagents jobs cancel JOB_ID"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = jobs.add_subparsers(dest="jobs_command", required=True, metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="start a job: an agent per row of INPUT",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("input", type=Path, metavar="INPUT", help="a .csv or .jsonl file of rows")
    run.add_argument("--agent", required=True, metavar="NAME", help="each row's agent type")
    run.add_argument(
        "--prompt", required=True, metavar="TEMPLATE", help="each row's prompt: {column} filled"
    )
    run.add_argument("--output", type=Path, metavar="OUT.csv", help="default: beside INPUT")
    run.add_argument("--id-column", metavar="COLUMN", help="the column of each row's item id")
    run.add_argument(
        "--max-concurrency",
        type=int,
        metavar="N",
        help=f"rows at once (default {DEFAULT_MAX_CONCURRENCY})",
    )
    run.add_argument(
        "--max-runtime",
        type=float,
        metavar="S",
        help=f"seconds per row (default {DEFAULT_MAX_RUNTIME:g})",
    )
    run.add_argument(
        "--output-schema", type=Path, metavar="FILE", help="a JSON Schema each result must match"
    )
    run.add_argument("--agents", dest="agents_json", metavar="JSON", help="agents, as in Claude")
    _add_run_options(run)
    run.set_defaults(func=_run_command)

    resume = sub.add_parser(
        "resume",
        help="go on with a stopped or killed job: its finished rows are kept",
        description="Run a job's pending rows; rows that finished are neither run nor lost.",
    )
    resume.add_argument("job_id", metavar="JOB_ID")
    resume.add_argument("--max-concurrency", type=int, metavar="N", help="rows at once")
    resume.add_argument("--max-runtime", type=float, metavar="S", help="seconds per row")
    resume.add_argument("--agents", dest="agents_json", metavar="JSON", help="agents, as in Claude")
    _add_run_options(resume)
    resume.set_defaults(func=_resume_command)

    listing = sub.add_parser("list", help="every job of the state directory, newest first")
    _add_state_options(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object per job")
    listing.set_defaults(func=_list_command)

    show = sub.add_parser("show", help="a job's settings, counts and failed rows")
    show.add_argument("job_id", metavar="JOB_ID")
    _add_state_options(show)
    show.add_argument("--json", action="store_true", help="as one JSON object")
    show.set_defaults(func=_show_command)

    cancel = sub.add_parser(
        "cancel", help="stop a job: running rows stop, pending rows stay pending"
    )
    cancel.add_argument("job_id", metavar="JOB_ID")
    _add_state_options(cancel)
    cancel.set_defaults(func=_cancel_command)


def _add_state_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cwd", type=Path, metavar="DIR", help="working directory (default: .)")
    parser.add_argument(
        "--state-dir", type=Path, metavar="DIR", help="transcripts, logs and jobs (DIR/jobs)"
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, help="local (default) or ray")
    parser.add_argument("--address", metavar="ADDR", help="the Ray cluster (--backend ray)")
    parser.add_argument("--workers", type=int, metavar="N", help="Ray workers (--backend ray)")
    parser.add_argument(
        "--provider",
        choices=("scripted", "anthropic"),
        help="default: anthropic when ANTHROPIC_API_KEY is set, scripted otherwise",
    )
    _add_state_options(parser)
    parser.add_argument("--json", action="store_true", help="every job event as a JSON line")
    parser.add_argument("--yes", action="store_true", help="approve every tool request")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log to stderr")
    add_trust_flag(parser)


# -- checking the command line ----------------------------------------------------------------


class _Usage(Exception):
    """A mistake on the command line: one line, exit code 2."""


def _check_numbers(args: argparse.Namespace) -> None:
    if args.max_concurrency is not None and args.max_concurrency < 1:
        raise _Usage("--max-concurrency must be at least 1.")
    if args.max_runtime is not None and not 0 < args.max_runtime < float("inf"):
        raise _Usage("--max-runtime must be a number of seconds above 0.")
    if args.workers is not None and args.workers < 1:
        raise _Usage("--workers must be at least 1.")
    backend = args.backend or "local"
    for flag, value in (("--address", args.address), ("--workers", args.workers)):
        if value is not None and backend != "ray":
            raise _Usage(f"{flag} needs --backend ray.")


def _backend_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.address is not None:
        options["address"] = args.address
    if args.workers is not None:
        options["workers"] = args.workers
    return options


def _spec_fields(args: argparse.Namespace, cwd: Path) -> dict[str, Any]:
    """The :class:`JobSpec` fields the shared flags give (how to run, not what)."""
    fields: dict[str, Any] = {"cwd": cwd, "backend": args.backend or "local"}
    options = _backend_options(args)
    if options:
        fields["backend_options"] = options
    if args.max_concurrency is not None:
        fields["max_concurrency"] = args.max_concurrency
    if args.max_runtime is not None:
        fields["max_runtime"] = args.max_runtime
    return fields


def _state_overrides(args: argparse.Namespace) -> dict[str, Any]:
    if args.state_dir:
        return {"state_dir": str(args.state_dir.expanduser().resolve())}
    return {}


def _jobs_dir(config: RuntimeConfig) -> Path:
    return config.state_dir / "jobs"


# -- run and resume ---------------------------------------------------------------------------


def _run_spec(args: argparse.Namespace, cwd: Path) -> JobSpec:
    """The job the flags describe; a mistake raises :class:`_Usage` or ``JobInputError``."""
    _check_numbers(args)
    given = args.input.expanduser()
    source = given if given.is_absolute() else cwd / given
    if not source.is_file():
        raise _Usage(f"{source} is not a file; give the CSV or JSONL file of rows.")
    if source.suffix.lower() not in (".csv", ".jsonl", ".ndjson"):
        raise _Usage(f"{source} is neither .csv nor .jsonl; name the file for its format.")
    schema = args.output_schema
    if schema is not None:
        schema = schema.expanduser()
        schema = schema if schema.is_absolute() else cwd / schema
        if not schema.is_file():
            raise _Usage(f"--output-schema {schema} is not a file.")
    output = args.output
    if output is not None:
        output = output.expanduser()
        output = output if output.is_absolute() else cwd / output
    return JobSpec(
        input_path=source,
        agent=args.agent,
        prompt=args.prompt,
        output_path=output,
        output_schema=schema,
        id_column=args.id_column,
        **_spec_fields(args, cwd),
    )


def _run_command(args: argparse.Namespace) -> int:
    command = "jobs run"
    cwd, problem = check_cwd(args)
    if problem is not None:
        return fail(command, problem)
    try:
        spec = _run_spec(args, cwd)
    except (_Usage, JobInputError) as exc:
        return fail(command, str(exc))

    async def start(rt: Runtime, cancel: trio.Event) -> JobSummary:
        rt.catalog.get(spec.agent)  # an unknown type fails here, listing the known ones
        return await rt.run_job(spec, cancel=cancel)

    return _execute(command, args, cwd, start)


def _resume_command(args: argparse.Namespace) -> int:
    command = "jobs resume"
    cwd, problem = check_cwd(args)
    if problem is not None:
        return fail(command, problem)
    try:
        _check_numbers(args)
    except _Usage as exc:
        return fail(command, str(exc))
    fields = _spec_fields(args, cwd)
    fields.pop("cwd")  # the stored spec's paths are the job's
    if args.backend is None:
        fields.pop("backend")  # the job's own backend, unless another is named

    def start(rt: Runtime, cancel: trio.Event) -> Awaitable[Any]:
        return rt.resume_job(args.job_id, cancel=cancel, **fields)

    return _execute(command, args, cwd, start)


Start = Callable[[Runtime, trio.Event], Awaitable[Any]]


def _execute(command: str, args: argparse.Namespace, cwd: Path, start: Start) -> int:
    env = dict(os.environ)
    if args.provider == "anthropic" and not env.get("ANTHROPIC_API_KEY", "").strip():
        return fail(command, "--provider anthropic needs ANTHROPIC_API_KEY in the environment.")
    agents = args.agents_json
    if agents is not None:
        try:
            parsed = json.loads(agents)
        except json.JSONDecodeError as exc:
            return fail(command, f"--agents is not valid JSON ({exc.msg} at character {exc.pos})")
        if not isinstance(parsed, dict):
            return fail(
                command, "--agents must be a JSON object mapping agent names to definitions"
            )
    trusted = decide_trust(command, args, cwd, env, agents or "{}")
    try:
        config = load_config(
            cwd=cwd, env=env, overrides=base_overrides(args), trust_project=trusted
        )
        return trio.run(_session, command, args, config, cwd, env, agents, start)
    except (JobInputError, UnknownJob, UnknownAgentError) as exc:
        return fail(command, one_line(exc), _USAGE)
    except SubagentsError as exc:
        return fail(command, one_line(exc), 1)
    except BaseExceptionGroup as group:
        errors = leaves(group)
        if errors and all(isinstance(e, SubagentsError) for e in errors):
            usage = JobInputError | UnknownJob | UnknownAgentError
            code = _USAGE if isinstance(errors[0], usage) else 1
            return fail(command, one_line(errors[0]), code)
        raise


async def _session(
    command: str,
    args: argparse.Namespace,
    config: RuntimeConfig,
    cwd: Path,
    env: Mapping[str, str],
    agents: str | None,
    start: Start,
) -> int:
    scripted = config.resolved_provider(env) == "scripted"
    provider: Provider | None = ScriptedProvider() if scripted else None
    mode = "json" if args.json else ("live" if sys.stdout.isatty() else "plain")
    console = Console(stderr=mode == "json")
    if mode != "json":
        note = (
            "scripted (offline; set ANTHROPIC_API_KEY to use Claude)" if scripted else "anthropic"
        )
        console.print(f"[dim]provider: {note}[/dim]")
    bus = Bus()
    cancel = trio.Event()
    summary: Any = None
    async with cancel_on_signals(command) as interrupts:
        with interrupts.scope:
            async with (
                _opened(provider),
                open_job_progress(mode, bus, sys.stdout, console) as watch,
                open_runtime(
                    config,
                    cwd=cwd,
                    env=env,
                    provider=provider,
                    bus=bus,
                    agents_json=agents,
                    approval_callback=_approve_all if args.yes else None,
                ) as rt,
            ):
                summary = await start(rt, cancel)
    _closing_line(console, watch, summary, interrupts.exit_code)
    if interrupts.exit_code is not None:
        return interrupts.exit_code
    if summary is None or summary.status != "completed" or summary.failed:
        return 1
    return 0


async def _approve_all(request: ApprovalRequest) -> ApprovalDecision:
    """``--yes``: every tool request of every row is approved."""
    return ApprovalDecision.approve("--yes")


class _opened:
    """``async with provider`` for the provider this command made (none: nothing)."""

    def __init__(self, provider: Provider | None) -> None:
        self._provider = provider

    async def __aenter__(self) -> None:
        if self._provider is not None:
            await self._provider.__aenter__()  # type: ignore[attr-defined]

    async def __aexit__(self, *exc: object) -> None:
        if self._provider is not None:
            await self._provider.__aexit__(*exc)  # type: ignore[attr-defined]


def _closing_line(console: Console, watch: JobWatch, summary: Any, signal_code: int | None) -> None:
    """The last line: how the job ended, or how to resume it (on stderr with ``--json``)."""
    job_id = summary.job_id if summary is not None else watch.job_id
    if job_id is None:
        return
    shown = visible(job_id)
    if signal_code is not None or summary is None or summary.status == "cancelled":
        text = (
            f"job {shown} stopped with {watch.done} of {plural(watch.total, 'row')} done; "
            f"resume it with: subagents jobs resume {shown}"
        )
    else:
        where = (
            "" if summary.output_path is None else f"; output: {visible(str(summary.output_path))}"
        )
        text = (
            f"job {shown} {summary.status}: {plural(summary.total, 'row')}, "
            f"{summary.completed} completed, {summary.failed} failed{where}"
        )
    console.print(text, soft_wrap=True, markup=False, highlight=False)


# -- list, show, cancel -----------------------------------------------------------------------


def _state_dir(command: str, args: argparse.Namespace) -> tuple[Path | None, int]:
    """The jobs folder of the state directory the flags and settings name, or the exit code."""
    cwd, problem = check_cwd(args)
    if problem is not None:
        return None, fail(command, problem)
    try:
        config = load_config(cwd=cwd, env=dict(os.environ), overrides=_state_overrides(args))
    except SubagentsError as exc:
        return None, fail(command, one_line(exc), 1)
    return _jobs_dir(config), 0


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds)) if seconds > 0 else "-"


def _info_object(info: JobInfo) -> dict[str, Any]:
    return {
        "job_id": info.job_id,
        "status": info.status,
        "agent": info.agent,
        "input_path": info.input_path,
        "output_path": info.output_path,
        "total": info.total,
        "completed": info.completed,
        "failed": info.failed,
        "pending": info.pending,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "holder": info.holder,
        "failures": [{"item_id": i, "last_error": e} for i, e in info.failures],
    }


def _print_json(value: object) -> None:
    print(json_safe(json.dumps(value, ensure_ascii=False)))


def _list_command(args: argparse.Namespace) -> int:
    folder, code = _state_dir("jobs list", args)
    if folder is None:
        return code
    try:
        jobs = list_jobs(folder)
    except (SubagentsError, OSError) as exc:
        return fail("jobs list", one_line(exc), 1)
    if args.json:
        for info in reversed(jobs):
            _print_json(_info_object(info))
        return 0
    if not jobs:
        print(f"no jobs in {visible(str(folder))}")
        return 0
    rows = [("JOB", "STATUS", "AGENT", "DONE", "FAILED", "UPDATED", "INPUT")]
    rows += [
        (
            visible(info.job_id),
            info.status,
            visible(info.agent),
            f"{info.completed + info.failed}/{info.total}",
            str(info.failed),
            _when(info.updated_at),
            visible(info.input_path),
        )
        for info in reversed(jobs)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
              + "  " + row[-1])  # fmt: skip
    return 0


def _one_job(
    command: str, args: argparse.Namespace, act: Callable[[Path, str], JobInfo]
) -> tuple[JobInfo | None, int]:
    """``act(state dir, job id)``'s job, or ``None`` and the exit code of its one-line error
    (an unknown job is a usage error)."""
    folder, code = _state_dir(command, args)
    if folder is None:
        return None, code
    try:
        return act(folder, args.job_id), 0
    except UnknownJob as exc:
        return None, fail(command, one_line(exc), _USAGE)
    except (SubagentsError, OSError) as exc:
        return None, fail(command, one_line(exc), 1)


def _show_command(args: argparse.Namespace) -> int:
    info, code = _one_job("jobs show", args, show_job)
    if info is None:
        return code
    if args.json:
        _print_json(_info_object(info))
        return 0
    lines = [
        f"job       {visible(info.job_id)}",
        f"status    {info.status}"
        + ("" if info.holder is None else f" (process {visible(info.holder)})"),
        f"agent     {visible(info.agent)}",
        f"input     {visible(info.input_path)}",
        f"output    {'-' if info.output_path is None else visible(info.output_path)}",
        f"rows      {info.total}: {info.completed} completed, {info.failed} failed, "
        f"{info.pending} pending",
        f"created   {_when(info.created_at)}",
        f"updated   {_when(info.updated_at)}",
    ]
    for item_id, error in info.failures:
        lines.append(f"failed    {visible(item_id)}: {' '.join(visible(error).split())}")
    if info.status in ("interrupted", "cancelled") and info.pending:
        lines.append(f"resume it with: subagents jobs resume {visible(info.job_id)}")
    print("\n".join(lines))
    return 0


def _cancel_command(args: argparse.Namespace) -> int:
    info, code = _one_job("jobs cancel", args, cancel_job)
    if info is None:
        return code
    shown = visible(info.job_id)
    if info.status == "completed":
        print(f"job {shown} had already completed; nothing to cancel")
        return 0
    running = "" if info.holder is None else " (the process running it stops its rows)"
    print(
        f"job {shown} cancelled{running}: {info.pending} rows pending; "
        f"resume it with: subagents jobs resume {shown}"
    )
    return 0
