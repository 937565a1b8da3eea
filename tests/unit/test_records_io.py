"""records.jsonl: the writer flushes within 100 ms of rows; the reader skips damaged rows."""

from __future__ import annotations

import warnings
from pathlib import Path

import orjson

from loadgen.records import DamagedRecords, Record, RecordWriter, read_records

MS = 1_000_000


def rec(i: int, end_ms: int) -> Record:
    return Record(
        step=0,
        id=i,
        warmup=False,
        request_id=f"r{i}",
        prompt_tokens_requested=8,
        max_tokens=4,
        end_ns=end_ms * MS,
        token_ns=[1, 2],
        ok=True,
    )


def lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def test_writer_flushes_when_its_rows_span_100_ms_or_64_rows(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    w = RecordWriter(path)
    w.write(rec(0, 1000))
    w.write(rec(1, 1050))
    assert w.pending and lines(path) == 0
    w.write(rec(2, 1100))  # 100 ms after the oldest waiting row
    assert not w.pending and lines(path) == 3
    for i in range(64):  # same end time: only the row count flushes
        w.write(rec(3 + i, 2000))
    assert not w.pending and lines(path) == 67
    w.write(rec(99, 2000))
    w.flush()  # the caller's timer flushes a quiet tail
    assert lines(path) == 68
    w.close()


def test_reader_skips_and_counts_damaged_rows(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    good = orjson.dumps(rec(0, 5))
    row = orjson.loads(good)
    damaged = [
        b"[1, 2, 3]",  # not an object
        b'"step"',
        b"not json",
        b"\xff\xfe",  # not UTF-8
        orjson.dumps({k: v for k, v in row.items() if k != "request_id"}),  # required key gone
        orjson.dumps({**row, "sent_ns": "12"}),  # wrong types
        orjson.dumps({**row, "token_ns": [1, "2"]}),
        orjson.dumps({**row, "ok": 1}),
        orjson.dumps({**row, "end_ns": 1e308}),
        orjson.dumps({**row, "step": True}),
        good[: len(good) // 2],  # torn
    ]
    extra = orjson.dumps({**row, "id": 1, "unknown_key": {"x": 1}, "session": None})
    path.write_bytes(b"\n".join([good, *damaged, b"", extra]) + b"\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = list(read_records(path))
    assert [r.id for r in records] == [0, 1]
    assert records[0] == rec(0, 5)
    (w,) = caught
    assert isinstance(w.message, DamagedRecords)
    assert w.message.skipped == len(damaged) and w.message.path == path
    assert "skipped 11 damaged row(s)" in str(w.message)


def test_reader_of_a_clean_file_says_nothing(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    w = RecordWriter(path)
    w.write(rec(0, 1))
    w.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r.id for r in read_records(path)] == [0]
