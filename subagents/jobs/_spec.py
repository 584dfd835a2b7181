"""What a job is: its input, its agent and template, its bounds and where its state lives.

:class:`JobSpec` is a frozen value checked when it is made, with the project's
one rule for counts and for seconds (:func:`subagents.actors.is_count`,
:func:`~subagents.actors.is_seconds`). Its defaults follow Codex's agent jobs
(``codex-rs/core/src/tools/handlers/agent_jobs.rs``: 16 rows at once, 30
minutes per row). It is stored with the job, as JSON, so a resume needs only
the job id.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import msgspec

from subagents.actors import is_count, is_seconds
from subagents.jobs._exceptions import JobInputError

__all__ = [
    "DEFAULT_BACKEND",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_ROW_BYTES",
    "DEFAULT_MAX_RUNTIME",
    "DEFAULT_RETRY_DELAY",
    "JobSpec",
]

#: Rows run at once (Codex's ``DEFAULT_AGENT_JOB_CONCURRENCY``).
DEFAULT_MAX_CONCURRENCY: Final = 16
#: Seconds one row's agent may run (Codex's ``DEFAULT_AGENT_JOB_ITEM_TIMEOUT``, 30 min).
DEFAULT_MAX_RUNTIME: Final = 1800.0
#: Attempts at a row that fails with a transient error (a provider overload...).
DEFAULT_MAX_ATTEMPTS: Final = 3
#: Seconds before the first retry of a row; each further retry waits twice as long.
DEFAULT_RETRY_DELAY: Final = 1.0
#: The largest row (a CSV record or a JSONL line) read, in bytes.
DEFAULT_MAX_ROW_BYTES: Final = 1 << 20
#: The backend that runs rows unless another is named.
DEFAULT_BACKEND: Final = "local"


def _path(value: str | os.PathLike[str]) -> Path:
    return Path(value)


def _path_or_none(value: str | os.PathLike[str] | None) -> Path | None:
    return None if value is None else Path(value)


def _schema(value: Any) -> Path | Mapping[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    return Path(value)


def _count(minimum: int) -> Any:
    def check(_: Any, attribute: attrs.Attribute[int], value: object) -> None:
        if not is_count(value, minimum):
            raise JobInputError(
                f"{attribute.name} must be a whole number of at least {minimum} (got {value!r})."
            )

    return check


def _positive_seconds(_: Any, attribute: attrs.Attribute[float], value: object) -> None:
    if not is_seconds(value) or value == 0:
        raise JobInputError(
            f"{attribute.name} must be a finite number of seconds above 0 (got {value!r})."
        )


def _seconds(_: Any, attribute: attrs.Attribute[float], value: object) -> None:
    if not is_seconds(value):
        raise JobInputError(
            f"{attribute.name} must be a finite number of seconds, 0 or more (got {value!r})."
        )


def _nonempty(_: Any, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise JobInputError(f"{attribute.name} must be a non-empty string (got {value!r}).")


@attrs.frozen
class JobSpec:
    """One agent job: an agent of ``agent`` per row of ``input_path``, prompted by ``prompt``.

    ``prompt`` is a template whose ``{column}`` placeholders are filled with
    the row's values (``{{`` and ``}}`` are literal braces, as in Codex);
    every placeholder must name a column. ``output_schema`` (a JSON Schema, or
    the path of a JSON file holding one) is what each row's ``complete_task``
    result must satisfy. ``id_column`` names the column whose value is a
    row's item id (else ``row-N``, N from 1). Relative paths are taken from
    ``cwd`` (default: the current folder); ``state_dir`` ``None`` is the
    runtime's state directory's ``jobs`` folder. ``output_path`` ``None``
    writes ``<input stem>.<job id>.csv`` beside the input. ``job_id``
    ``None`` starts a new job; an existing job's id resumes it.
    ``backend_options`` go to the backend as given (Ray's address, workers).
    """

    input_path: Path = attrs.field(converter=_path)
    agent: str = attrs.field(validator=_nonempty)
    prompt: str = attrs.field(validator=_nonempty)
    output_path: Path | None = attrs.field(default=None, converter=_path_or_none)
    max_concurrency: int = attrs.field(default=DEFAULT_MAX_CONCURRENCY, validator=_count(1))
    max_runtime: float = attrs.field(default=DEFAULT_MAX_RUNTIME, validator=_positive_seconds)
    output_schema: Path | Mapping[str, Any] | None = attrs.field(
        default=None, converter=_schema, hash=False
    )
    max_attempts: int = attrs.field(default=DEFAULT_MAX_ATTEMPTS, validator=_count(1))
    retry_delay: float = attrs.field(default=DEFAULT_RETRY_DELAY, validator=_seconds)
    id_column: str | None = None
    backend: str = attrs.field(default=DEFAULT_BACKEND, validator=_nonempty)
    backend_options: Mapping[str, Any] = attrs.field(factory=dict, hash=False)
    state_dir: Path | None = attrs.field(default=None, converter=_path_or_none)
    cwd: Path | None = attrs.field(default=None, converter=_path_or_none)
    job_id: str | None = None
    max_row_bytes: int = attrs.field(default=DEFAULT_MAX_ROW_BYTES, validator=_count(1))

    def resolve(self, path: Path) -> Path:
        """``path`` made absolute against :attr:`cwd` (the current folder without one)."""
        base = Path.cwd() if self.cwd is None else self.cwd
        return Path(os.path.abspath(base / path.expanduser()))

    def to_json(self) -> bytes:
        """The spec as JSON (paths as text), as the job's state stores it."""
        data: dict[str, Any] = {}
        for field in attrs.fields(JobSpec):
            value = getattr(self, field.name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            data[field.name] = value
        return msgspec.json.encode(data)

    @classmethod
    def from_json(cls, data: bytes | str) -> JobSpec:
        """The spec :meth:`to_json` wrote."""
        fields: dict[str, Any] = msgspec.json.decode(data)
        known = {field.name for field in attrs.fields(JobSpec)}
        return cls(**{key: value for key, value in fields.items() if key in known})
