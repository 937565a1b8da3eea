"""Trace readers: every format, exact ns offsets, time_scale, window, sorting and bad input."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.errors import ScenarioError
from loadgen.records import Record, RecordWriter
from loadgen.workload.trace_stats import arrival_profile, trace_stats
from loadgen.workload.traces import (
    TRACE_FORMATS,
    TraceRow,
    load_trace,
    read_trace,
    rescale,
)

MS = 1_000_000
S = 1_000_000_000

# The first lines of kvcache-ai/Mooncake FAST25-release/traces/conversation_trace.jsonl.
MOONCAKE = """\
{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}
{"timestamp": 0, "input_length": 2290, "output_length": 316, "hash_ids": [0, 42, 43, 44, 45]}
{"timestamp": 3000, "input_length": 915, "output_length": 355, "hash_ids": [0, 462]}
{"timestamp": 5999, "input_length": 1053, "output_length": 26, "hash_ids": [0, 773, 774]}
"""  # noqa: E501

# The first lines of Azure/AzurePublicDataset data/AzureLLMInferenceTrace_conv.csv (2023).
AZURE_2023 = """\
TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:50.9951690,396,109
2023-11-16 18:15:51.2224670,879,55
2023-11-16 18:15:51.2224671,91,16
"""

# The 2024 week-long traces: microseconds and a UTC offset, and sometimes no fraction.
AZURE_2024 = """\
TIMESTAMP,ContextTokens,GeneratedTokens
2024-05-12 23:59:59.995460+00:00,2688,366
2024-05-13 00:00:00+00:00,1452,3
2024-05-13 00:00:00.041683+00:00,584,3
"""

# HPMLL/BurstGPT data/BurstGPT_1.csv layout; the 0-response row is a failure.
BURSTGPT = """\
Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
5,ChatGPT,472,18,490,Conversation log
45,ChatGPT,1087,230,1317,Conversation log
46,GPT-4,300,0,300,API log
118,GPT-4,417,276,693,Conversation log
"""


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error(path: Path | str, fmt: str = "auto", **kwargs: Any) -> str:
    with pytest.raises(ScenarioError) as info:
        load_trace(path, fmt, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def offsets(rows: list[TraceRow]) -> list[int]:
    return [r.offset_ns for r in rows]


# ------------------------------------------------------------------ formats


def test_mooncake_rows_offsets_and_blocks(tmp_path: Path) -> None:
    trace = load_trace(write(tmp_path, "trace.jsonl", MOONCAKE))
    assert trace.fmt == "mooncake"
    assert offsets(trace.rows) == [0, 0, 3000 * MS, 5999 * MS]
    assert trace.rows[1] == TraceRow(0, 2290, 316, (0, 42, 43, 44, 45), None)
    assert [r.input_tokens for r in trace.rows] == [6758, 2290, 915, 1053]
    assert [r.output_tokens for r in trace.rows] == [500, 316, 355, 26]
    assert trace.skipped == {} and trace.clamped == {}


def test_mooncake_fractional_ms_session_id_and_no_hash_ids(tmp_path: Path) -> None:
    text = (
        '{"timestamp": 10.5, "input_length": 9, "output_length": 2, "session_id": "conv_0"}\n'
        '{"timestamp": 12.25, "input_length": 9.0, "output_length": 3, "session_id": 7}\n'
    )
    rows = read_trace(write(tmp_path, "t.jsonl", text), "mooncake")
    assert offsets(rows) == [0, 1_750_000]
    assert [r.session for r in rows] == ["conv_0", "7"]
    assert rows[0].hash_ids == () and rows[1].input_tokens == 9


def test_azure_2023_is_read_to_100_ns(tmp_path: Path) -> None:
    trace = load_trace(write(tmp_path, "AzureLLMInferenceTrace_conv.csv", AZURE_2023))
    assert trace.fmt == "azure"
    assert offsets(trace.rows) == [0, 4_314_579_000, 4_541_877_000, 4_541_877_100]
    assert (trace.rows[0].input_tokens, trace.rows[0].output_tokens) == (374, 44)
    assert (trace.rows[3].input_tokens, trace.rows[3].output_tokens) == (91, 16)


def test_azure_2024_offsets_across_midnight(tmp_path: Path) -> None:
    rows = read_trace(write(tmp_path, "code_1week.csv", AZURE_2024))
    assert offsets(rows) == [0, 4_540_000, 46_223_000]
    assert [r.input_tokens for r in rows] == [2688, 1452, 584]


def test_azure_zone_offsets_are_applied(tmp_path: Path) -> None:
    text = (
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2024-05-12 10:00:00+02:00,5,5\n"  # 08:00 UTC
        "2024-05-12 08:00:01Z,5,5\n"
        "2024-05-12T07:00:02-01:00,5,5\n"  # 08:00:02 UTC
    )
    assert offsets(read_trace(write(tmp_path, "t.csv", text))) == [0, S, 2 * S]


def test_burstgpt_skips_and_counts_failures(tmp_path: Path) -> None:
    trace = load_trace(write(tmp_path, "BurstGPT_1.csv", BURSTGPT))
    assert trace.fmt == "burstgpt"
    assert offsets(trace.rows) == [0, 40 * S, 113 * S]
    assert [(r.input_tokens, r.output_tokens) for r in trace.rows] == [
        (472, 18),
        (1087, 230),
        (417, 276),
    ]
    assert trace.skipped == {"failed": 1}


def test_burstgpt_session_layout_and_fractional_seconds(tmp_path: Path) -> None:
    text = (
        "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,"
        "Total tokens,Log Type\n"
        "0.5,a1b2,3.2,ChatGPT,100,20,120,Conversation log\n"
        "1.000000001,,1.0,GPT-4,200,30,230,API log\n"
        "2.5e0,a1b2,0.1,GPT-4,300,40,340,Conversation log\n"
    )
    rows = read_trace(write(tmp_path, "BurstGPT_3.csv", text), "burstgpt")
    assert offsets(rows) == [0, 500_000_001, 2 * S]
    assert [r.session for r in rows] == ["a1b2", None, "a1b2"]


def record_line(**fields: object) -> bytes:
    row = {
        "step": 0,
        "id": 0,
        "warmup": False,
        "request_id": "r",
        "prompt_tokens_requested": 8,
        "max_tokens": 4,
        "scheduled_ns": None,
        "start_ns": 0,
        "ok": True,
    }
    row.update(fields)
    return orjson.dumps(row) + b"\n"


def test_loadgen_records_written_by_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    for i, sched in enumerate([None, 7_000_000_123, 7_000_000_000, 7_250_000_000]):
        writer.write(
            Record(
                step=0,
                id=i,
                warmup=i == 0,
                request_id=f"r{i}",
                prompt_tokens_requested=100 + i,
                max_tokens=10 + i,
                scheduled_ns=sched,
                start_ns=9_000_000_000 + i,
            )
        )
    writer.close()
    trace = load_trace(path)
    assert trace.fmt == "loadgen"
    assert offsets(trace.rows) == [0, 123, 250_000_000]
    assert [(r.input_tokens, r.output_tokens) for r in trace.rows] == [
        (102, 12),
        (101, 11),
        (103, 13),
    ]
    assert trace.skipped == {"warmup": 1}


def test_loadgen_start_ns_server_count_session_and_torn_line(tmp_path: Path) -> None:
    text = (
        record_line(start_ns=5_000, prompt_tokens_requested=None, prompt_tokens_server=33)
        + record_line(start_ns=8_000, session=3)
        + record_line(start_ns=1_000, scheduled_ns=2_000, session="s-9")
        + b'{"step": 0, "id": 9, "warmup": fal'
    )
    trace = load_trace(write(tmp_path, "records.jsonl", text))
    assert offsets(trace.rows) == [0, 3_000, 6_000]
    assert [r.input_tokens for r in trace.rows] == [8, 33, 8]
    assert [r.session for r in trace.rows] == ["s-9", None, "3"]
    assert trace.skipped == {"torn_line": 1}


def test_zero_lengths_are_raised_to_one_and_counted(tmp_path: Path) -> None:
    text = (
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:15:46.6805900,0,44\n"
        "2023-11-16 18:15:47.6805900,5,0\n"
        "2023-11-16 18:15:48.6805900,0,0\n"
    )
    trace = load_trace(write(tmp_path, "t.csv", text))
    assert [(r.input_tokens, r.output_tokens) for r in trace.rows] == [(1, 44), (5, 1), (1, 1)]
    assert trace.clamped == {"input_tokens": 2, "output_tokens": 2}


def test_blank_lines_bom_and_spaces_are_tolerated(tmp_path: Path) -> None:
    text = "\ufeffTIMESTAMP, ContextTokens ,GeneratedTokens\n\n2023-11-16 18:15:46.1,3, 4\n\n"
    rows = read_trace(write(tmp_path, "t.csv", text))
    assert rows == [TraceRow(0, 3, 4)]
    rows = read_trace(write(tmp_path, "t.jsonl", "\n" + MOONCAKE + "\n\n"))
    assert len(rows) == 4


# ------------------------------------------------ sorting, window, scale, limit


def test_rows_are_sorted_stably(tmp_path: Path) -> None:
    text = (
        '{"timestamp": 2000, "input_length": 1, "output_length": 1}\n'
        '{"timestamp": 500, "input_length": 2, "output_length": 1}\n'
        '{"timestamp": 2000, "input_length": 3, "output_length": 1}\n'
        '{"timestamp": 500, "input_length": 4, "output_length": 1}\n'
    )
    rows = read_trace(write(tmp_path, "t.jsonl", text))
    assert offsets(rows) == [0, 0, 1500 * MS, 1500 * MS]
    assert [r.input_tokens for r in rows] == [2, 4, 1, 3]


def test_time_scale_multiplies_gaps(tmp_path: Path) -> None:
    path = write(tmp_path, "t.jsonl", MOONCAKE)
    assert offsets(read_trace(path, time_scale=2.0)) == [0, 0, 6000 * MS, 11998 * MS]
    assert offsets(read_trace(path, time_scale=0.5)) == [0, 0, 1500 * MS, 2999500 * 1000]
    rows = read_trace(path)
    assert rescale(rows, 3.0) == read_trace(path, time_scale=3.0)
    assert rescale(rows, 1.0) == rows


def test_window_keeps_original_offsets_in_start_end_and_rebases(tmp_path: Path) -> None:
    path = write(tmp_path, "BurstGPT_1.csv", BURSTGPT)  # offsets 0, 40, 113 s
    rows = read_trace(path, window_s=(40.0, 113.0))
    assert offsets(rows) == [0]
    assert rows[0].input_tokens == 1087
    rows = read_trace(path, window_s=(39.5, 200.0), time_scale=0.5)
    assert offsets(rows) == [0, 36_500_000_000]
    assert offsets(read_trace(path, window_s=(0, float("inf")))) == [0, 40 * S, 113 * S]


def test_window_is_applied_to_the_sorted_trace(tmp_path: Path) -> None:
    text = (
        '{"timestamp": 9000, "input_length": 1, "output_length": 1}\n'
        '{"timestamp": 1000, "input_length": 2, "output_length": 1}\n'
        '{"timestamp": 4000, "input_length": 3, "output_length": 1}\n'
    )
    rows = read_trace(write(tmp_path, "t.jsonl", text), window_s=(2.0, 8.0))
    assert [(r.offset_ns, r.input_tokens) for r in rows] == [(0, 3)]


def test_limit_keeps_the_first_rows_of_the_window(tmp_path: Path) -> None:
    path = write(tmp_path, "t.jsonl", MOONCAKE)
    rows = read_trace(path, window_s=(1.0, 10.0), limit=1)
    assert rows == [TraceRow(0, 915, 355, (0, 462))]
    assert len(read_trace(path, limit=3)) == 3


# ------------------------------------------------------------ auto detection


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        ("a.jsonl", MOONCAKE, "mooncake"),
        ("a.json", '{"timestamp": 0, "input_length": 5, "output_length": 1}\n', "mooncake"),
        ("a.txt", MOONCAKE, "mooncake"),
        ("records.jsonl", record_line().decode(), "loadgen"),
        ("a.csv", AZURE_2023, "azure"),
        ("a.trace", AZURE_2024, "azure"),
        ("a.csv", BURSTGPT, "burstgpt"),
    ],
)
def test_auto_detection(tmp_path: Path, name: str, text: str, fmt: str) -> None:
    assert load_trace(write(tmp_path, name, text)).fmt == fmt


def test_forced_format_overrides_the_guess(tmp_path: Path) -> None:
    path = write(tmp_path, "trace.csv", AZURE_2023)
    msg = error(path, "burstgpt")
    assert msg == (
        f"{path}:1: expected columns Timestamp, Request tokens, Response tokens "
        "(burstgpt format); got TIMESTAMP, ContextTokens, GeneratedTokens"
    )


def test_auto_cannot_tell(tmp_path: Path) -> None:
    path = write(tmp_path, "trace.csv", "time,prompt,output\n1,2,3\n")
    assert error(path) == (
        f"{path}:1: cannot tell the trace format from the header: expected columns "
        "TIMESTAMP, ContextTokens, GeneratedTokens (azure) or Timestamp, Request tokens, "
        "Response tokens (burstgpt); got time, prompt, output"
    )
    path = write(tmp_path, "trace.jsonl", '\n{"t": 1, "n": 2}\n')
    assert error(path) == (
        f"{path}:2: cannot tell the trace format: expected a key input_length (mooncake), "
        "prompt_tokens_requested (loadgen) or resourceSpans (otlp); got keys t, n; "
        "set load.trace_format"
    )
    path = write(tmp_path, "empty.jsonl", "\n\n")
    assert error(path) == f"{path}: the trace is empty"


# ----------------------------------------------------------------- bad input


def test_missing_file_directory_and_unknown_format(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert error(missing) == f"{missing}: no such trace file"
    assert error(tmp_path).startswith(f"{tmp_path}: cannot read the trace: ")
    path = write(tmp_path, "t.jsonl", MOONCAKE)
    assert error(path, "sharegpt") == (
        "trace_format: expected one of auto, mooncake, azure, burstgpt, loadgen, otlp; "
        "got 'sharegpt'"
    )
    assert TRACE_FORMATS == ("auto", "mooncake", "azure", "burstgpt", "loadgen", "otlp")


def test_missing_column(tmp_path: Path) -> None:
    path = write(tmp_path, "trace.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.1,3\n")
    assert error(path, "azure") == (
        f"{path}:1: expected columns TIMESTAMP, ContextTokens, GeneratedTokens (azure format); "
        "got TIMESTAMP, ContextTokens"
    )
    path = write(tmp_path, "empty.csv", "")
    assert error(path, "azure").endswith("(azure format); got nothing")


def test_bad_json_values_name_the_line_and_field(tmp_path: Path) -> None:
    lines = MOONCAKE.splitlines(keepends=True) * 3
    lines[11] = '{"timestamp": 9000, "input_length": "x", "output_length": 1}\n'
    path = write(tmp_path, "trace.jsonl", "".join(lines))
    assert error(path) == f"{path}:12: input_length: expected a non-negative integer, got 'x'"

    def bad(line: str, fmt: str = "mooncake") -> str:
        return error(write(tmp_path, "t.jsonl", MOONCAKE + line), fmt).split(":", 1)[1]

    assert bad('{"timestamp": 1, "input_length": 2}\n') == (
        "5: output_length: missing; expected a non-negative integer"
    )
    assert bad('{"input_length": 2, "output_length": 2}\n') == (
        "5: timestamp: missing; the mooncake format expects keys "
        "timestamp, input_length, output_length"
    )
    assert bad('{"timestamp": -1, "input_length": 2, "output_length": 2}\n') == (
        "5: timestamp: expected non-negative milliseconds, got -1"
    )
    assert bad('{"timestamp": 1, "input_length": 2.5, "output_length": 2}\n') == (
        "5: input_length: expected a non-negative integer, got 2.5"
    )
    assert bad('{"timestamp": 1, "input_length": true, "output_length": 2}\n') == (
        "5: input_length: expected a non-negative integer, got True"
    )
    assert bad(
        '{"timestamp": 1, "input_length": 2, "output_length": 2, "hash_ids": [1, "a"]}\n'
    ) == ("5: hash_ids: expected a list of integers, got [1, 'a']")
    assert bad("[1, 2]\n") == "5: expected a JSON object, got list [1, 2]"
    assert (
        bad('{"timestamp": 1,\n')
        == "5: expected a JSON object, got invalid JSON '{\"timestamp\": 1,\\n'"
    )
    path = write(tmp_path, "records.jsonl", record_line() + record_line(start_ns="soon"))
    assert error(path) == f"{path}:2: start_ns: expected integer nanoseconds, got 'soon'"


def test_loadgen_missing_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "records.jsonl", b'{"warmup": false, "max_tokens": 3}\n')
    assert error(path, "loadgen") == (
        f"{path}:1: start_ns: missing; the loadgen format expects keys scheduled_ns or start_ns"
    )
    path = write(tmp_path, "records.jsonl", b'{"start_ns": 1, "max_tokens": 3}\n')
    assert error(path, "loadgen") == (
        f"{path}:1: prompt_tokens_server: missing; expected a non-negative integer"
    )


def test_bad_csv_values_name_the_line_and_column(tmp_path: Path) -> None:
    def bad(row: str, base: str = AZURE_2023) -> str:
        return error(write(tmp_path, "trace.csv", base + row)).split(":", 1)[1]

    assert bad("2023-11-16 18:16:00.1,12,x\n") == (
        "6: GeneratedTokens: expected a non-negative integer, got 'x'"
    )
    assert bad("2023-11-16 18:16:00.1,-3,4\n") == (
        "6: ContextTokens: expected a non-negative integer, got '-3'"
    )
    assert bad("16/11/2023 18:16,12,4\n") == (
        "6: TIMESTAMP: expected a date-time like 2023-11-16 18:15:46.6805900, "
        "got '16/11/2023 18:16'"
    )
    assert bad("2023-02-30 18:16:00,12,4\n").startswith("6: TIMESTAMP: expected a date-time")
    assert bad("2023-11-16 25:16:00,12,4\n").startswith("6: TIMESTAMP: expected a date-time")
    assert bad("2023-11-16 18:16:00.1,12\n") == "6: expected 3 fields as in the header, got 2"
    assert bad("soon,ChatGPT,1,2,3,API log\n", BURSTGPT) == (
        "6: Timestamp: expected non-negative seconds, got 'soon'"
    )
    assert bad("-4,ChatGPT,1,2,3,API log\n", BURSTGPT) == (
        "6: Timestamp: expected non-negative seconds, got '-4'"
    )
    assert bad("7,ChatGPT,1,2.5,3,API log\n", BURSTGPT) == (
        "6: Response tokens: expected a non-negative integer, got '2.5'"
    )


def test_csv_module_errors_are_one_line(tmp_path: Path) -> None:
    huge = "x" * 200_000
    path = write(tmp_path, "trace.csv", AZURE_2023 + f'"{huge}",1,2\n')
    assert error(path).startswith(f"{path}:6: CSV syntax error: field larger than field limit")


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "trace.csv", AZURE_2023.encode() + b"2023-11-16 18:16:00.1,\xff3,4\n")
    assert error(path) == f"{path}:6: expected UTF-8 text, got byte 0xff at column 23"
    path = write(tmp_path, "trace.jsonl", MOONCAKE.encode() + b'{"timestamp": 1, "x": "\xe9"}\n')
    assert error(path) == f"{path}:5: expected UTF-8 text, got byte 0xe9 at column 24"
    path = write(tmp_path, "first.jsonl", b'{"timestamp": "\xe9"}\n')
    assert error(path) == f"{path}:1: expected UTF-8 text, got byte 0xe9 at column 16"


def test_no_rows_left(tmp_path: Path) -> None:
    path = write(tmp_path, "BurstGPT_1.csv", BURSTGPT)
    assert error(path, window_s=(200.0, 300.0)) == (
        f"{path}: no requests in window_s [200, 300) s; the trace spans 0 to 113.000 s"
    )
    path = write(tmp_path, "fails.csv", BURSTGPT.splitlines()[0] + "\n3,GPT-4,300,0,300,API log\n")
    assert error(path) == f"{path}: no requests in the trace (1 failed left out)"
    path = write(tmp_path, "records.jsonl", record_line(warmup=True))
    assert error(path) == f"{path}: no requests in the trace (1 warmup left out)"
    path = write(tmp_path, "header.csv", AZURE_2023.splitlines()[0] + "\n")
    assert error(path) == f"{path}: no requests in the trace"


WINDOW = "window_s: expected [start, end) with 0 <= start < end"


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"time_scale": 0.0}, "time_scale: expected a positive number, got 0.0"),
        ({"time_scale": float("nan")}, "time_scale: expected a positive number, got nan"),
        ({"window_s": (5.0, 5.0)}, f"{WINDOW}, got [5.0, 5.0]"),
        ({"window_s": (-1.0, 5.0)}, f"{WINDOW}, got [-1.0, 5.0]"),
        ({"limit": 0}, "limit: expected a positive integer, got 0"),
    ],
)
def test_bad_options(tmp_path: Path, kwargs: dict[str, Any], msg: str) -> None:
    assert error(write(tmp_path, "t.jsonl", MOONCAKE), **kwargs) == msg


# ---------------------------------------------------------------- summaries


def test_arrival_profile_bins() -> None:
    rows = [TraceRow(t * S // 10, 1, 1) for t in (0, 1, 2, 3, 10, 39, 40)]  # 0..4 s
    profile = arrival_profile(rows, bins=4)
    assert [start for start, _ in profile] == [0.0, 1.0, 2.0, 3.0]
    assert [rate for _, rate in profile] == [4.0, 1.0, 0.0, 2.0]  # the last arrival: last bin
    assert arrival_profile([], bins=4) == []
    assert arrival_profile([TraceRow(0, 1, 1), TraceRow(0, 1, 1)]) == [(0.0, 2.0)]
    with pytest.raises(ValueError, match="bins"):
        arrival_profile(rows, bins=0)


def test_arrival_profile_of_a_trace_file(tmp_path: Path) -> None:
    rows = read_trace(write(tmp_path, "BurstGPT_1.csv", BURSTGPT))  # 0, 40, 113 s
    (start0, rate0), (start1, rate1) = arrival_profile(rows, bins=2)
    assert (start0, start1) == (0.0, 56.5)
    assert rate0 == pytest.approx(2 / 56.5)
    assert rate1 == pytest.approx(1 / 56.5)


def test_trace_stats(tmp_path: Path) -> None:
    stats = trace_stats(read_trace(write(tmp_path, "t.jsonl", MOONCAKE)))
    assert stats["count"] == 4
    assert stats["duration_s"] == pytest.approx(5.999)
    assert stats["mean_rate_rps"] == pytest.approx(4 / 5.999)
    assert stats["input_tokens"]["p50"] == pytest.approx((2290 + 1053) / 2)
    assert stats["input_tokens"]["max"] == 6758
    assert stats["output_tokens"]["mean"] == pytest.approx((500 + 316 + 355 + 26) / 4)
    assert stats["shared_block_share"] == 1.0  # every FAST25 request starts with block 0
    assert stats["sessions"] is None


def test_trace_stats_shared_blocks_and_sessions() -> None:
    rows = [
        TraceRow(0, 1024, 5, (1, 2), "a"),
        TraceRow(S, 1024, 5, (1, 3), "a"),
        TraceRow(2 * S, 512, 5, (4,), "b"),
        TraceRow(3 * S, 100, 5),
    ]
    stats = trace_stats(rows)
    assert stats["shared_block_share"] == 0.5
    assert stats["sessions"] == 2
    assert stats["input_tokens"]["p90"] == pytest.approx(1024.0)
    assert trace_stats([TraceRow(0, 1, 1)])["mean_rate_rps"] is None
    assert trace_stats([TraceRow(0, 1, 1)])["shared_block_share"] is None
    with pytest.raises(ValueError):
        trace_stats([])


# -------------------------------------------------------------- performance


def test_100k_rows_read_quickly(tmp_path: Path) -> None:
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    lines += [
        f"2023-11-16 {18 + i // 3_600_000:02d}:{i // 60_000 % 60:02d}:{i // 1000 % 60:02d}"
        f".{i % 1000:03d}0000,{i % 4000},{i % 500 + 1}"
        for i in range(0, 2_000_000, 20)
    ]
    path = write(tmp_path, "big.csv", "\n".join(lines) + "\n")
    start = time.perf_counter()
    rows = read_trace(path)
    elapsed = time.perf_counter() - start
    assert len(rows) == 100_000
    assert rows[-1].offset_ns == 1_999_980 * MS
    assert elapsed < 5.0, f"100k rows took {elapsed:.2f} s"
