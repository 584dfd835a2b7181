"""Reading a job's rows from a CSV or JSONL file, each row bounded in size.

CSV follows Codex's agent jobs (``parse_csv`` and the checks of
``spawn_agents_on_csv`` in ``codex-rs/core/src/tools/handlers/agent_jobs.rs``):
a header row is required, a byte-order mark before it is dropped, header
names must be unique, a record whose every field is empty is skipped, and a
record with more or fewer fields than the header is an error naming its line.
JSONL holds one JSON object per line (blank lines skipped); its columns are
the keys in the order first seen. Item ids are Codex's: the ``id_column``
value when it is not blank, else ``row-N`` (N from 1), and a repeated id gets
``-2``, ``-3``... Every problem is a :class:`JobInputError` naming the file,
the line and what to do, raised before any row runs.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import attrs
import msgspec

from subagents.jobs._exceptions import JobInputError
from subagents.jobs._template import render_value

__all__ = ["InputRow", "JobInput", "read_input"]


@attrs.frozen
class InputRow:
    """One row: its position (from 0), its item id, its values and the line it starts on."""

    index: int
    item_id: str
    values: Mapping[str, Any]
    line: int


@attrs.frozen
class JobInput:
    """The rows of an input file and its columns, in file order."""

    path: Path
    columns: tuple[str, ...]
    rows: tuple[InputRow, ...]


def _bounded_lines(file: TextIO, path: Path, limit: int, where: list[int]) -> Iterator[str]:
    """The file's lines, no row read past ``limit`` bytes.

    ``where`` is ``[line number, bytes of the row so far]``: a reader sets the
    second to 0 before each row, so a CSV record over several lines is bounded
    as a whole. A line is read at most ``limit + 1`` characters at a time.
    """
    while True:
        line = file.readline(limit + 1)
        if not line:
            return
        where[0] += 1
        where[1] += len(line.encode("utf-8", "surrogatepass"))
        if where[1] > limit:
            raise JobInputError(
                f"a row is longer than the limit of {limit} bytes.",
                path=path,
                line=where[0],
                fix="Shorten it, or raise max_row_bytes.",
            )
        yield line


def _item_ids(rows: list[tuple[int, Mapping[str, Any], int]], id_column: str | None) -> list[str]:
    seen: set[str] = set()
    ids: list[str] = []
    for index, values, _ in rows:
        source = render_value(values.get(id_column)).strip() if id_column is not None else ""
        base = source or f"row-{index + 1}"
        item_id, suffix = base, 2
        while item_id in seen:
            item_id = f"{base}-{suffix}"
            suffix += 1
        seen.add(item_id)
        ids.append(item_id)
    return ids


def _read_csv(file: TextIO, path: Path, limit: int) -> tuple[tuple[str, ...], list[Any]]:
    where = [0, 0]
    lines = _bounded_lines(file, path, limit, where)
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise JobInputError(f"the header is not valid CSV: {exc}.", path=path, line=1) from None
    if not header or all(not name.strip() for name in header):
        raise JobInputError(
            "the CSV file has no header row.", path=path, fix="Add a first line naming the columns."
        )
    header[0] = header[0].lstrip("\ufeff")
    columns = tuple(header)
    seen: set[str] = set()
    for name in columns:
        if name in seen:
            raise JobInputError(
                f"the column {name!r} appears twice in the header.",
                path=path,
                line=1,
                column=name,
                fix="Rename one of them.",
            )
        seen.add(name)
    rows: list[tuple[int, Mapping[str, Any], int]] = []
    while True:
        start = where[0] + 1
        where[1] = 0
        try:
            record = next(reader, None)
        except csv.Error as exc:
            raise JobInputError(
                f"the row is not valid CSV: {exc}.",
                path=path,
                line=start,
                fix="Quote fields that hold commas, quotes or line breaks.",
            ) from None
        if record is None:
            break
        if all(field == "" for field in record):
            continue
        if len(record) != len(columns):
            raise JobInputError(
                f"the row has {len(record)} fields but the header has {len(columns)}.",
                path=path,
                line=start,
                fix="Give every row one field per column.",
            )
        rows.append((len(rows), dict(zip(columns, record, strict=True)), start))
    return columns, rows


def _read_jsonl(file: TextIO, path: Path, limit: int) -> tuple[tuple[str, ...], list[Any]]:
    where = [0, 0]
    columns: dict[str, None] = {}
    rows: list[tuple[int, Mapping[str, Any], int]] = []
    for line in _bounded_lines(file, path, limit, where):
        where[1] = 0
        if not line.strip():
            continue
        try:
            value = msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            raise JobInputError(
                f"the line is not valid JSON: {exc}.",
                path=path,
                line=where[0],
                fix="Write one JSON object per line.",
            ) from None
        if not isinstance(value, dict):
            raise JobInputError(
                f"the line holds a JSON {type(value).__name__}, not an object.",
                path=path,
                line=where[0],
                fix="Write one JSON object per line, its keys the columns.",
            )
        for key in value:
            columns.setdefault(key, None)
        rows.append((len(rows), value, where[0]))
    return tuple(columns), rows


def read_input(path: Path, *, id_column: str | None = None, max_row_bytes: int) -> JobInput:
    """Read the rows of ``path`` (``.jsonl``/``.ndjson`` as JSONL, anything else as CSV).

    Blocking: call it in a worker thread. Raises :class:`JobInputError`.
    """
    jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    try:
        with path.open(encoding="utf-8-sig" if not jsonl else "utf-8", newline="") as file:
            if jsonl:
                columns, rows = _read_jsonl(file, path, max_row_bytes)
            else:
                columns, rows = _read_csv(file, path, max_row_bytes)
    except FileNotFoundError:
        raise JobInputError(
            "the input file does not exist.", path=path, fix="Check the path (and --cwd)."
        ) from None
    except UnicodeDecodeError as exc:
        raise JobInputError(
            f"the input is not UTF-8 text ({exc.reason} at byte {exc.start}).",
            path=path,
            fix="Save it as UTF-8.",
        ) from None
    except IsADirectoryError:
        raise JobInputError("the input is a folder, not a file.", path=path) from None
    except OSError as exc:
        raise JobInputError(
            f"the input cannot be read: {exc.strerror or exc}.", path=path
        ) from None
    if id_column is not None and id_column not in columns:
        raise JobInputError(
            f"the id column {id_column!r} is not a column of the input "
            f"(columns: {', '.join(columns) or 'none'}).",
            path=path,
            column=id_column,
            fix="Name one of the columns, or leave id_column out to number the rows.",
        )
    ids = _item_ids(rows, id_column)
    return JobInput(
        path=path,
        columns=columns,
        rows=tuple(
            InputRow(index=index, item_id=item_id, values=values, line=line)
            for (index, values, line), item_id in zip(rows, ids, strict=True)
        ),
    )
