"""The mock's simulated draft model (--spec-decode K:RATE): drafts, one event per step, counters."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from mockhttp import MockProc, chat_body, completion_body, fetch_sync, read_truth

from loadgen.mock.config import settings_from_argv
from loadgen.mock.spec import SpecDecode, parse_spec_decode

LABELS = 'model_name="loadgen-mock",engine="0"'
USAGE = {"include_usage": True}


def counters(text: str) -> dict[str, float]:
    found = {}
    for name in ("drafts", "draft_tokens", "accepted_tokens"):
        full = f"vllm:spec_decode_num_{name}_total"
        match = re.search(rf"^{re.escape(full)}{{{re.escape(LABELS)}}} (\S+)$", text, re.M)
        assert match, name
        found[name] = float(match.group(1))
    return found


def test_the_option_parses_and_bad_values_are_refused() -> None:
    assert parse_spec_decode("3:0.7") == (3, 0.7)
    assert settings_from_argv(["--spec-decode", "2:1"]).spec_decode == (2, 1.0)
    assert settings_from_argv([]).spec_decode is None  # the default is unchanged: off
    for bad in ("3", "0:0.5", "3:1.5", "a:b", "3:-0.1"):
        with pytest.raises(ValueError, match="K:RATE"):
            parse_spec_decode(bad)
    with pytest.raises(SystemExit):
        settings_from_argv(["--spec-decode", "3:0.7", "--itl-ms", "5"])


def test_drafts_are_seeded_capped_by_room_and_counted_by_position() -> None:
    a, b = SpecDecode(3, 0.7, seed=5), SpecDecode(3, 0.7, seed=5)
    draws = [a.draft(10) for _ in range(2000)]
    assert draws == [b.draft(10) for _ in range(2000)]
    assert a.drafts == 2000 and a.draft_tokens == 6000
    assert a.accepted == sum(acc for _, acc in draws)
    assert a.per_pos == [sum(1 for _, acc in draws if acc > i) for i in range(3)]
    assert abs(a.accepted / a.draft_tokens - 0.7) < 4 * (0.21 / 6000) ** 0.5
    assert a.draft(2)[0] == 2 and a.draft(0) == (0, 0)  # no room: no draft counted
    assert a.drafts == 2001


def test_a_speculative_step_is_one_event_and_the_counters_are_the_truths(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--spec-decode", "3:0.7", "--seed", "4", "--truth", str(truth))
    before = counters(fetch_sync(mock.port, "GET", "/metrics").body.decode())
    assert before == {"drafts": 0, "draft_tokens": 0, "accepted_tokens": 0}
    replies = [
        fetch_sync(mock.port, "POST", "/v1/chat/completions", chat_body(max_tokens=40)),
        fetch_sync(
            mock.port,
            "POST",
            "/v1/completions",
            completion_body(max_tokens=40, stream_options=USAGE),
        ),
    ]
    after = counters(fetch_sync(mock.port, "GET", "/metrics").body.decode())
    mock.stop()
    rows = read_truth(truth)
    assert len(rows) == 2
    sums = [sum(r["spec_decode"][i] for r in rows) for i in range(3)]
    assert sums == [after["drafts"], after["draft_tokens"], after["accepted_tokens"]]
    assert after["accepted_tokens"] <= after["draft_tokens"] <= 3 * after["drafts"]
    for reply, row in zip(replies, rows, strict=True):
        events = [orjson.loads(e) for e in reply.events() if e != b"[DONE]"]
        texts = [
            c.get("text", c.get("delta", {}).get("content"))
            for e in events
            for c in e["choices"]
            if "role" not in c.get("delta", {})
        ]
        assert events[-1]["usage"]["completion_tokens"] == 40 == row["output_tokens"]
        stamps = row["token_ns"]
        groups = [stamps.count(t) for t in dict.fromkeys(stamps)]  # tokens per write
        assert len(texts) == len(groups) < 40  # one event per engine step, several tokens
        assert max(groups) <= 4 and groups[0] == 1  # 1 + at most K; prefill gives one
        accepted = row["spec_decode"][2]
        assert sum(groups) - accepted == len(groups)  # each step: its own token + accepted


def test_without_the_option_no_spec_decode_counter_is_exported(
    start_mock: Callable[..., MockProc],
) -> None:
    mock = start_mock()
    assert "spec_decode" not in fetch_sync(mock.port, "GET", "/metrics").body.decode()
