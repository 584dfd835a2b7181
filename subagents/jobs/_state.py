"""A job's durable state: one SQLite database per job, in the job's folder of the state dir.

The standard library's ``sqlite3``, in WAL mode with ``synchronous=NORMAL``:
a committed transaction survives the process being killed (``kill -9``), and
readers (``jobs list``/``show`` in another process) never block the writer.
:class:`JobDatabase` is the blocking side (one connection);
:class:`JobStore` runs every call of it in a worker thread, one at a time
(a ``CapacityLimiter(1)``), so the Trio thread never waits on the disk. A
row's outcome is committed before the job counts it as done; outcomes that
arrive within 50 ms of each other are committed in one transaction (a group
commit), written by two statements over a JSON array of them. A row is
``pending`` until its final outcome: a resume runs every pending row again,
and a row already ``completed`` or ``failed`` is never written twice.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, Literal, ParamSpec, TypeVar

import attrs
import msgspec
import trio

from subagents.jobs._exceptions import JobError

__all__ = [
    "DATABASE_NAME",
    "ItemRow",
    "JobDatabase",
    "JobRecord",
    "JobStatus",
    "JobStore",
    "OutcomeRecord",
]

#: The database file in a job's folder.
DATABASE_NAME: Final = "job.sqlite"

JobStatus = Literal["running", "completed", "cancelled"]
"""``running`` until every row is final (or it was cancelled); ``completed`` once the
output is written."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS job (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    columns TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    output_path TEXT
);
CREATE TABLE IF NOT EXISTS items (
    idx INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL UNIQUE,
    row TEXT NOT NULL,
    line INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    result_json TEXT,
    started_at REAL,
    completed_at REAL
);
CREATE INDEX IF NOT EXISTS items_status ON items (status, idx);
"""


@attrs.frozen
class JobRecord:
    """The job's row: its spec (JSON), columns, status and counts."""

    job_id: str
    spec_json: str
    columns: tuple[str, ...]
    status: str
    created_at: float
    updated_at: float
    output_path: str | None
    total: int
    completed: int
    failed: int

    @property
    def pending(self) -> int:
        """Rows not final yet."""
        return self.total - self.completed - self.failed


@attrs.frozen
class ItemRow:
    """One stored row: its values and how far it got."""

    index: int
    item_id: str
    values: dict[str, Any]
    status: str
    attempts: int
    last_error: str | None = None
    result_json: str | None = None
    started_at: float | None = None
    completed_at: float | None = None


@attrs.frozen
class OutcomeRecord:
    """One outcome to commit: ``final`` ends the row, else it is an attempt to retry."""

    item_id: str
    attempt: int
    final: bool
    status: str
    error: str | None
    result_json: str | None
    started_at: float
    completed_at: float


#: Whether this SQLite has ``UPDATE ... FROM`` (3.33) and JSON built in with ``->>``
#: (3.38): then :meth:`JobDatabase.record` writes a batch of outcomes in one statement.
_BATCHED_UPDATES: Final = sqlite3.sqlite_version_info >= (3, 38, 0)
_BATCH_ENCODER: Final = msgspec.json.Encoder()
#: The rows of a batch (a JSON array of outcomes, each an array) still pending. Both
#: statements find each row by ``item_id`` (``CROSS JOIN`` and ``+status`` keep the planner
#: off the status index, which would read every pending row once per outcome).
_PENDING_OF_BATCH: Final = (
    "SELECT json_group_array(items.item_id) FROM json_each(?) AS o "
    "CROSS JOIN items ON items.item_id = o.value ->> 0 WHERE items.status = 'pending'"
)
#: A batch's outcomes written to their pending rows: a final one ends its row, any other
#: records the attempt (what ``JobDatabase._record_one`` writes for one outcome).
_UPDATE_FROM_BATCH: Final = """
UPDATE items SET
    status = CASE WHEN o.value ->> 1 THEN o.value ->> 2 ELSE items.status END,
    attempts = o.value ->> 3,
    last_error = o.value ->> 4,
    result_json = CASE WHEN o.value ->> 1 THEN o.value ->> 5 ELSE items.result_json END,
    started_at = o.value ->> 6,
    completed_at = CASE WHEN o.value ->> 1 THEN o.value ->> 7 ELSE items.completed_at END
FROM json_each(?) AS o
WHERE items.item_id = o.value ->> 0 AND +items.status = 'pending'
"""


def _batchable(outcomes: Sequence[OutcomeRecord]) -> bool:
    """Whether ``outcomes`` can go as one batch: this SQLite can, there are several, each of
    another row, and no text holds a NUL (SQLite's JSON functions end a string there)."""
    return (
        _BATCHED_UPDATES
        and len({o.item_id for o in outcomes}) == len(outcomes) > 1
        and not any(
            "\0" in o.item_id
            or "\0" in o.status
            or "\0" in (o.error or "")
            or "\0" in (o.result_json or "")
            for o in outcomes
        )
    )


class JobDatabase:
    """A job's SQLite database through one connection (blocking; see :class:`JobStore`)."""

    __slots__ = ("_conn", "path")

    def __init__(self, path: Path, *, create: bool = False, readonly: bool = False) -> None:
        self.path = path
        if not create and not path.is_file():
            raise JobError(f"The job's state {path} does not exist.")
        uri = f"{path.as_uri()}?mode={'ro' if readonly else 'rwc'}"
        try:
            self._conn = sqlite3.connect(
                uri, uri=True, check_same_thread=False, isolation_level=None, timeout=5.0
            )
            if not readonly:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise JobError(
                f"The job's state {path} cannot be opened: {exc}. Check that the state "
                "directory is writable and the file is a job's database."
            ) from exc

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def create(
        self,
        job_id: str,
        spec_json: str,
        columns: Sequence[str],
        rows: Iterable[tuple[int, str, dict[str, Any], int]],
    ) -> None:
        """Store a new job and its rows, all pending, in one transaction."""
        now = time.time()
        encode = msgspec.json.encode
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO job (id, spec, columns, status, created_at, updated_at) "
                "VALUES (?, ?, ?, 'running', ?, ?)",
                (job_id, spec_json, encode(list(columns)).decode(), now, now),
            )
            conn.executemany(
                "INSERT INTO items (idx, item_id, row, line) VALUES (?, ?, ?, ?)",
                (
                    (index, item_id, encode(values).decode(), line)
                    for index, item_id, values, line in rows
                ),
            )

    def load(self) -> JobRecord:
        """The job's record and counts."""
        row = self._conn.execute(
            "SELECT id, spec, columns, status, created_at, updated_at, output_path FROM job"
        ).fetchone()
        if row is None:
            raise JobError(f"The job's state {self.path} holds no job.")
        counts = dict(
            self._conn.execute("SELECT status, COUNT(*) FROM items GROUP BY status").fetchall()
        )
        return JobRecord(
            job_id=row[0],
            spec_json=row[1],
            columns=tuple(msgspec.json.decode(row[2])),
            status=row[3],
            created_at=row[4],
            updated_at=row[5],
            output_path=row[6],
            total=sum(counts.values()),
            completed=counts.get("completed", 0),
            failed=counts.get("failed", 0),
        )

    def pending(self, after: int, limit: int) -> list[ItemRow]:
        """Up to ``limit`` pending rows after position ``after``, in file order."""
        return [
            self._item(row)
            for row in self._conn.execute(
                "SELECT idx, item_id, row, status, attempts, last_error, result_json, "
                "started_at, completed_at FROM items WHERE status = 'pending' AND idx > ? "
                "ORDER BY idx LIMIT ?",
                (after, limit),
            )
        ]

    def items(self, status: str | None = None, limit: int = -1) -> list[ItemRow]:
        """Every row (or those of ``status``), in file order."""
        where = "" if status is None else "WHERE status = ? "
        args: tuple[Any, ...] = () if status is None else (status,)
        return [
            self._item(row)
            for row in self._conn.execute(
                "SELECT idx, item_id, row, status, attempts, last_error, result_json, "
                f"started_at, completed_at FROM items {where}ORDER BY idx LIMIT ?",
                (*args, limit),
            )
        ]

    @staticmethod
    def _item(row: tuple[Any, ...]) -> ItemRow:
        return ItemRow(
            index=row[0],
            item_id=row[1],
            values=msgspec.json.decode(row[2]),
            status=row[3],
            attempts=row[4],
            last_error=row[5],
            result_json=row[6],
            started_at=row[7],
            completed_at=row[8],
        )

    def record(self, outcomes: Sequence[OutcomeRecord]) -> tuple[list[bool], str]:
        """Commit ``outcomes`` together; whether each changed its row, and the job's status.

        A final outcome for a row that is no longer pending changes nothing
        (it was recorded already): no row is ever written twice. A batch of
        distinct rows goes as one JSON array, read and written by two statements
        whatever its size: each statement hands the GIL back and takes it again,
        and a busy Trio thread makes each taking slow, so not two per row.
        """
        with self._transaction() as conn:
            if _batchable(outcomes):
                applied = self._record_batch(conn, outcomes)
            else:
                applied = [self._record_one(conn, outcome) for outcome in outcomes]
            status: str = conn.execute("SELECT status FROM job").fetchone()[0]
        return applied, status

    @staticmethod
    def _record_one(conn: sqlite3.Connection, outcome: OutcomeRecord) -> bool:
        if outcome.final:
            cursor = conn.execute(
                "UPDATE items SET status = ?, attempts = ?, last_error = ?, "
                "result_json = ?, started_at = ?, completed_at = ? "
                "WHERE item_id = ? AND status = 'pending'",
                (
                    outcome.status,
                    outcome.attempt,
                    outcome.error,
                    outcome.result_json,
                    outcome.started_at,
                    outcome.completed_at,
                    outcome.item_id,
                ),
            )
        else:
            cursor = conn.execute(
                "UPDATE items SET attempts = ?, last_error = ?, started_at = ? "
                "WHERE item_id = ? AND status = 'pending'",
                (outcome.attempt, outcome.error, outcome.started_at, outcome.item_id),
            )
        return bool(cursor.rowcount == 1)

    @staticmethod
    def _record_batch(conn: sqlite3.Connection, outcomes: Sequence[OutcomeRecord]) -> list[bool]:
        """:meth:`_record_one` for each of ``outcomes`` (distinct rows), in two statements."""
        batch = _BATCH_ENCODER.encode(
            [
                (
                    o.item_id,
                    o.final,
                    o.status,
                    o.attempt,
                    o.error,
                    o.result_json,
                    o.started_at,
                    o.completed_at,
                )
                for o in outcomes
            ]
        )
        pending = set(msgspec.json.decode(conn.execute(_PENDING_OF_BATCH, (batch,)).fetchone()[0]))
        conn.execute(_UPDATE_FROM_BATCH, (batch,))
        return [outcome.item_id in pending for outcome in outcomes]

    def set_status(self, status: JobStatus, *, output_path: str | None = None) -> None:
        """Set the job's status (and where its output went)."""
        with self._transaction() as conn:
            if output_path is None:
                conn.execute("UPDATE job SET status = ?, updated_at = ?", (status, time.time()))
            else:
                conn.execute(
                    "UPDATE job SET status = ?, updated_at = ?, output_path = ?",
                    (status, time.time(), output_path),
                )


_P = ParamSpec("_P")
_T = TypeVar("_T")


class JobStore:
    """A :class:`JobDatabase` called from Trio: every call in a worker thread, one at a time."""

    __slots__ = ("_db", "_limiter")

    def __init__(self, db: JobDatabase) -> None:
        self._db = db
        self._limiter = trio.CapacityLimiter(1)

    @classmethod
    async def open(cls, path: Path, *, create: bool = False) -> JobStore:
        """Open (or create) the database at ``path`` in a worker thread."""
        db = await trio.to_thread.run_sync(lambda: JobDatabase(path, create=create))
        return cls(db)

    async def call(self, function: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run ``function`` (a method of the database) in the store's worker thread."""
        return await trio.to_thread.run_sync(
            lambda: function(*args, **kwargs), limiter=self._limiter
        )

    @property
    def db(self) -> JobDatabase:
        """The blocking database (for :meth:`call`)."""
        return self._db

    async def aclose(self) -> None:
        """Close the connection (in the worker thread, after any call under way)."""
        await self.call(self._db.close)
