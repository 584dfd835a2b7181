"""The job's SQLite state: a batch of outcomes is written as each would be, one by one."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from subagents.jobs._state import _BATCHED_UPDATES as BATCHED
from subagents.jobs._state import JobDatabase, OutcomeRecord

pytestmark = pytest.mark.skipif(not BATCHED, reason="this SQLite has no UPDATE ... FROM")

ROWS = 6


def _database(path: Path) -> JobDatabase:
    db = JobDatabase(path, create=True)
    db.create("job", "{}", ["n"], [(i, f"row-{i}", {"n": str(i)}, i + 2) for i in range(ROWS)])
    return db


_outcome = st.builds(
    OutcomeRecord,
    item_id=st.sampled_from([f"row-{i}" for i in range(ROWS)]),
    attempt=st.integers(1, 5),
    final=st.booleans(),
    status=st.sampled_from(["completed", "failed"]),
    error=st.none() | st.text(max_size=20),
    result_json=st.none() | st.just('{"a": "é\\u0000"}') | st.text(max_size=20),
    started_at=st.floats(0, 2e9) | st.just(time.time()),
    completed_at=st.floats(0, 2e9),
)
#: Batches of distinct rows (the engine never sends one row twice in a commit).
_batch = st.lists(_outcome, min_size=2, max_size=ROWS, unique_by=lambda o: o.item_id)


@settings(max_examples=60, deadline=None)
@given(earlier=st.lists(_batch, max_size=3), batch=_batch)
def test_a_batch_writes_what_one_outcome_at_a_time_writes(
    tmp_path_factory: pytest.TempPathFactory,
    earlier: list[list[OutcomeRecord]],
    batch: list[OutcomeRecord],
) -> None:
    """Issue 19: ``record`` writes a batch of distinct rows in two statements (the SQLite
    thread takes the GIL back a few times per commit, not twice per row). What it writes,
    and which outcomes it says changed their row, are what the row-by-row path gives: a
    final outcome ends a pending row, a retry records its attempt, a row already final
    is never written again. Strings (non-ASCII; a NUL, which SQLite's JSON would cut:
    such a batch goes row by row) and timestamps come back exact."""
    folder = tmp_path_factory.mktemp("state")
    batched, single = _database(folder / "a.sqlite"), _database(folder / "b.sqlite")
    try:
        for outcomes in [*earlier, batch]:
            applied, status = batched.record(outcomes)
            with single._transaction() as conn:
                expected = [single._record_one(conn, o) for o in outcomes]
            assert (applied, status) == (expected, "running")
        assert batched.items() == single.items()
    finally:
        batched.close()
        single.close()


def test_a_batch_reads_each_row_by_its_id(tmp_path: Path) -> None:
    """The two statements look their rows up by ``item_id``: the query planner, left to
    itself, reads every pending row once per outcome (500 outcomes in a 10,000-row job:
    five million row reads a commit)."""
    from subagents.jobs._state import _PENDING_OF_BATCH, _UPDATE_FROM_BATCH

    db = _database(tmp_path / "job.sqlite")
    conn = sqlite3.connect(tmp_path / "job.sqlite")
    try:
        for statement in (_PENDING_OF_BATCH, _UPDATE_FROM_BATCH):
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + statement, ("[]",))]
            assert plan[0].startswith("SCAN o"), plan
            assert any("items USING INDEX sqlite_autoindex_items_1 (item_id=?)" in p for p in plan)
    finally:
        conn.close()
        db.close()
