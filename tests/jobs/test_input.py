"""Reading a job's rows: CSV as Codex's ``parse_csv`` reads it, JSONL, and every bad input.

Codex (``codex-rs/core/src/tools/handlers/agent_jobs.rs``) drops a leading
byte-order mark, skips records whose fields are all empty, refuses duplicate
headers and a record whose field count differs from the header's, and names
items by ``id_column`` (else ``row-N``), suffixing a repeated id with ``-2``...
"""

from __future__ import annotations

from pathlib import Path

import pytest

from subagents.jobs import DEFAULT_MAX_ROW_BYTES, JobInputError, read_input


def read(path: Path, **options: object) -> object:
    options.setdefault("max_row_bytes", DEFAULT_MAX_ROW_BYTES)
    return read_input(path, **options)  # type: ignore[arg-type]


def test_csv_rows_with_a_bom_quoted_fields_and_blank_records(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes('\ufeffid,text\r\n1,"a, b"\r\n,\r\n2,"two\nlines"\r\n'.encode())
    found = read_input(path, max_row_bytes=DEFAULT_MAX_ROW_BYTES)
    assert found.columns == ("id", "text")
    assert [dict(r.values) for r in found.rows] == [
        {"id": "1", "text": "a, b"},
        {"id": "2", "text": "two\nlines"},
    ]
    assert [r.item_id for r in found.rows] == ["row-1", "row-2"]
    assert [r.line for r in found.rows] == [2, 4]


def test_item_ids_come_from_the_id_column_and_repeats_are_suffixed(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("key,v\na,1\na,2\n,3\na,4\n")
    found = read_input(path, id_column="key", max_row_bytes=DEFAULT_MAX_ROW_BYTES)
    assert [r.item_id for r in found.rows] == ["a", "a-2", "row-3", "a-3"]


def test_jsonl_rows_take_their_columns_in_the_order_first_seen(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"b": 1, "a": "x"}\n\n{"c": [1, 2], "a": "y"}\n')
    found = read_input(path, id_column="a", max_row_bytes=DEFAULT_MAX_ROW_BYTES)
    assert found.columns == ("b", "a", "c")
    assert [r.item_id for r in found.rows] == ["x", "y"]
    assert found.rows[1].values["c"] == [1, 2]
    assert found.rows[1].line == 3


@pytest.mark.parametrize(
    ("name", "content", "match", "line"),
    [
        ("in.csv", "", "no header row", None),
        ("in.csv", "a,a\n1,2\n", "'a' appears twice", 1),
        ("in.csv", "a,b\n1,2\n1,2,3\n", "3 fields but the header has 2", 3),
        ("in.csv", 'a,b\n1,"unterminated\n', "not valid CSV", 2),
        ("in.jsonl", '{"a": 1}\n[1, 2]\n', "JSON list, not an object", 2),
        ("in.jsonl", '{"a": 1}\n{"a": \n', "not valid JSON", 2),
    ],
)
def test_a_bad_input_names_the_file_and_the_line(
    tmp_path: Path, name: str, content: str, match: str, line: int | None
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(JobInputError, match=match) as caught:
        read_input(path, max_row_bytes=DEFAULT_MAX_ROW_BYTES)
    assert caught.value.path == str(path)
    assert caught.value.line == line
    assert str(path) in str(caught.value)


def test_a_row_past_the_size_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("a\n" + "x" * 5000 + "\n")
    with pytest.raises(JobInputError, match="longer than the limit of 100 bytes") as caught:
        read_input(path, max_row_bytes=100)
    assert caught.value.line == 2
    long_field = tmp_path / "multi.csv"
    long_field.write_text('a\n"' + "y\n" * 80 + '"\n')
    with pytest.raises(JobInputError, match="longer than the limit"):
        read_input(long_field, max_row_bytes=100)


def test_an_unknown_id_column_a_missing_file_and_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(JobInputError, match="id column 'key' is not a column"):
        read_input(path, id_column="key", max_row_bytes=DEFAULT_MAX_ROW_BYTES)
    with pytest.raises(JobInputError, match="does not exist"):
        read_input(tmp_path / "nope.csv", max_row_bytes=DEFAULT_MAX_ROW_BYTES)
    (tmp_path / "latin.csv").write_bytes(b"a\n\xe9t\xe9\n")
    with pytest.raises(JobInputError, match="not UTF-8"):
        read_input(tmp_path / "latin.csv", max_row_bytes=DEFAULT_MAX_ROW_BYTES)
    with pytest.raises(JobInputError, match="folder"):
        read_input(tmp_path, max_row_bytes=DEFAULT_MAX_ROW_BYTES)
