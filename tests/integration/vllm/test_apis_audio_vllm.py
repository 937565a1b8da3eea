"""Audio on real vLLM: ``api: openai-transcriptions`` uploads to a tiny random Whisper.

One server of this module's own (``vllm_whisper``: tiny-whisper, built by
``vllm-cpu.sh whisper``, stopped when the module ends). loadgen uploads each
``workload.audio`` clip as multipart/form-data and reads vLLM's streamed
``transcription.chunk`` events; the proxy (``tap.Tap``) keeps the raw bodies,
so the clip's length, the form fields and the answer's text and usage are
checked against what loadgen recorded.

vLLM's ``usage.prompt_tokens`` for a transcription is the decoder prompt plus
the clip's log-mel frames, ``ceil(seconds x 16000 / 160)``
(``WhisperForConditionalGeneration.get_num_audio_tokens``): 100 a second. The
decoder prompt is ``<|prev|>`` + the request's ``prompt`` + ``<|startoftranscript|>
<|en|><|transcribe|><|notimestamps|>``, and since it does not begin with the
decoder start token vLLM puts one more ``<|startoftranscript|>`` in front
(``inputs/engine.py``): the prompt text's tokens + 6. loadgen plans the text as
a completions prompt, with the tokenizer's post-processor (Whisper's adds
``<|startoftranscript|><|notimestamps|>`` ... ``<|endoftext|>``, 3 tokens), which
the transcription's decoder prompt does not have: planned = text + 3.
"""

from __future__ import annotations

import io
import math
import re
import statistics
import wave
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import StepSummary
from loadgen.workload.tokenizer import PromptTokenizer

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

from tests.integration.vllm.tap import Tap

pytestmark = pytest.mark.vllm

Build = Callable[..., Scenario]
N = 12
PROMPT, OUTPUT = 4, 12
DECODER_TAGS = 6  # <|startoftranscript|><|prev|> before the text, four task tokens after it
POST_PROCESSOR = 3  # what the Whisper tokenizer adds to a completions prompt
HOP, RATE = 160, 16000  # tiny-whisper's WhisperFeatureExtractor
MS = 1e6


def in_steady_window(step: StepSummary, records: list[Record]) -> list[Record]:
    """The records the step's media figures count: those that ended in its steady window."""
    if step.steady_started_ns is None or step.steady_ended_ns is None:
        return records
    return [r for r in records if step.steady_started_ns < r.end_ns <= step.steady_ended_ns]


def form_parts(body: bytes) -> dict[str, bytes]:
    """The named parts of a multipart/form-data body."""
    boundary = body.split(b"\r\n", 1)[0]
    parts = {}
    for chunk in body.split(boundary)[1:-1]:
        head, _, value = chunk.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]+)"', head)
        assert name is not None, head
        parts[name.group(1).decode()] = value[: -len(b"\r\n")]
    return parts


def wav_seconds(data: bytes) -> float:
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, RATE)
        return w.getnframes() / w.getframerate()


def sse_events(answer: bytes) -> list[dict[str, object]]:
    lines = answer.split(b"\n")
    return [orjson.loads(x[6:]) for x in lines if x.startswith(b"data: ") and x != b"data: [DONE]"]


def test_transcriptions_upload_the_clip_and_stream_its_text(
    vllm_whisper: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    tok = PromptTokenizer.load(vllm_whisper.model_dir)
    with Tap(vllm_whisper.url) as tap:
        sc = scenario(
            target={
                "url": tap.root,
                "api": "openai-transcriptions",
                "model": vllm_whisper.model,
                "extra_body": {"language": "en"},
                "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
            },
            workload={
                "seed": 6,
                "tokenizer": str(vllm_whisper.model_dir),
                "prompt_tokens": {"dist": "fixed", "value": PROMPT},
                "output_tokens": {"dist": "fixed", "value": OUTPUT},
                "audio": {"seconds": {"dist": "uniform", "min": 0.5, "max": 4.0}},
            },
            load={"mode": "concurrency", "concurrency": [2], "requests_per_step": N},
        )
        summary = run_scenario(sc, RunOptions(out_dir=tmp_path, quiet=True, reports=False))
        wire = tap.exchanges()
    records = list(read_records(tmp_path / "records.jsonl"))
    step = summary.steps[0]
    assert step.requests.ok == N, [r.error_detail for r in records]
    for r in records:
        x = wire[r.request_id]
        assert r.ok and r.http_status == 200 and x.status == 200
        assert x.target == "/v1/audio/transcriptions"
        form = form_parts(x.body)
        assert form["model"] == vllm_whisper.model.encode() and form["language"] == b"en"
        assert form["stream"] == b"true" and int(form["max_completion_tokens"]) == OUTPUT
        seconds = wav_seconds(form["file"])
        assert seconds == pytest.approx(r.audio_s, abs=1e-3)
        events = sse_events(x.answer)
        usage = [e["usage"] for e in events if e.get("usage")]
        assert len(usage) == 1, events[-2:]  # the last event, with stream_include_usage
        assert r.prompt_tokens_server == usage[0]["prompt_tokens"]
        assert r.prompt_tokens_requested == PROMPT
        text = tok.count_text(form["prompt"].decode()) - POST_PROCESSOR
        assert text == PROMPT - POST_PROCESSOR  # planned exactly, as a completions prompt
        frames = math.ceil(seconds * RATE / HOP)
        assert r.prompt_tokens_server == frames + text + DECODER_TAGS
        # a random model may stop early (<|endoftext|>): usage says, never more than asked
        assert r.output_tokens_server == usage[0]["completion_tokens"] <= OUTPUT
        chunks = [e for e in events if e.get("object") == "transcription.chunk" and e["choices"]]
        assert 1 <= r.output_events == len(chunks) <= r.output_tokens_server
        assert r.first_token_ns is not None and r.sent_ns <= r.first_token_ns <= r.end_ns
    assert len({round(r.audio_s, 2) for r in records}) > 1
    assert step.media is not None
    counted = in_steady_window(step, records)
    assert step.media.audio_s_per_request == pytest.approx(
        sum(r.audio_s for r in counted) / len(counted), abs=1e-6
    )
    assert step.tokens.input_total == sum(r.prompt_tokens_server or 0 for r in records)
    ttft = statistics.median((r.first_token_ns or 0) / MS - r.sent_ns / MS for r in records)
    assert 0 < ttft < 10_000
    print(
        f"transcriptions: {sum(r.audio_s for r in records) / N:.2f} s audio/request, "
        f"prompt tokens {statistics.mean(r.prompt_tokens_server or 0 for r in records):.1f}, "
        f"output tokens {statistics.mean(r.output_tokens_server or 0 for r in records):.1f}; "
        f"TTFT p50 {ttft:.1f} ms"
    )
