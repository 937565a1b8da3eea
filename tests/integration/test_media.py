"""Images and audio end to end against the mock over real sockets, timed against its truth.

The mock counts an image's tokens by its pixels and a clip's by its seconds
(``--image-tokens-per-megapixel``, ``--audio-tokens-per-second``) in
``usage.prompt_tokens``, so the records' server counts must include them. A
large body (an 8 MB-class image) takes the client real time to write: that is
the send duration (``sent_ns - start_ns``), and TTFT from ``sent_ns`` (the
last byte written) must still agree with the mock's truth, which counts from
the read that completed the request.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.execute.monitor import SATURATION
from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.test_ground_truth import Agreement

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
MS = 1e6
#: |TTFT - truth| p99 for requests with media: a body of hundreds of KB, stamped by the
#: client before its first byte went (below LARGE_BODY) and by the mock when its last
#: byte came, so the send itself is in the difference (chat: test_ground_truth.py)
BOUND_MS = 1.0
#: attempts of the saturation test (loadgen's own health on a busy machine, not timing truth)
ATTEMPTS = 2
PER_MP, PER_S = 1000.0, 20.0
MEDIA_ARGS = ["--image-tokens-per-megapixel", str(PER_MP), "--audio-tokens-per-second", str(PER_S)]


def _truth(path: Path) -> dict[str, dict[str, Any]]:
    return {
        (row := orjson.loads(line))["request_id"]: row for line in path.read_bytes().splitlines()
    }


def _check_timing(label: str, records: list[Record], truth: dict[str, dict[str, Any]]) -> None:
    """TTFT within ``BOUND_MS`` and ITL within chat's (test_ground_truth.py), at p99 in this
    run, past loadgen's own error bound (``Agreement``)."""
    found = Agreement()
    for r in records:
        assert r.first_token_ns is not None
        found.add(r.first_token_ns, r.sent_ns, r.token_ns, truth[r.request_id], r.token_slack_ns)
    found.check(label, ttft_bound_ms=BOUND_MS)


def _images_run(run: RunFixture, scenario: Make, tmp: Path, side: int, n: int) -> tuple:
    truth_path = tmp / "truth.jsonl"
    truth_path.unlink(missing_ok=True)
    args = ["--ttft-ms", "20", "--itl-ms", "4", "--truth", str(truth_path), *MEDIA_ARGS]
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": args}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 16},
            "output_tokens": {"dist": "fixed", "value": 8},
            "images": {
                "count": {"dist": "fixed", "value": 2},
                "width": {"dist": "fixed", "value": side},
                "height": {"dist": "fixed", "value": side // 2},
            },
        },
        load={"concurrency": [1], "requests_per_step": n, "warmup_requests": 1},
    )
    summary, records, _ = run(sc)
    measured = [r for r in records if not r.warmup]
    assert summary.steps[0].requests.failed == 0
    return summary, measured, _truth(truth_path)


def test_chat_with_images_counts_their_tokens_and_keeps_ttft_true(
    run: RunFixture, scenario: Make, tmp_path: Path
) -> None:
    side = 400
    per_image = math.ceil(side * (side // 2) / 1e6 * PER_MP)
    summary, records, truth = _images_run(run, scenario, tmp_path, side, 40)
    for r in records:
        assert (r.images, r.image_pixels) == (2, 2 * side * (side // 2))
        assert r.prompt_tokens_server == 16 + 2 * per_image
        assert truth[r.request_id]["prompt_tokens"] == r.prompt_tokens_server
    _check_timing("images", records, truth)
    step = summary.steps[0]
    assert step.media is not None and step.media.images_per_request == 2.0
    assert step.media.megapixels_per_request == 2 * side * (side // 2) / 1e6
    assert step.prompt_lengths.compared == 0  # media requests are not length-checked
    assert step.send_ms is not None and step.send_ms.count == 40


def test_an_8_mb_body_is_timed_from_its_last_byte(
    run: RunFixture, scenario: Make, tmp_path: Path
) -> None:
    """Two ~1.6 MP noisy PNGs, ~8 MB of JSON: the send takes real time, TTFT does not grow.

    ``sent_ns`` is the kernel's stamp of the last byte's transmission (SO_TIMESTAMPING):
    polled for the send queue's end (SIOCOUTQNSD) it came 1-5 ms late on a busy machine."""
    summary, records, truth = _images_run(run, scenario, tmp_path, 2000, 6)
    for r in records:
        assert r.request_bytes > 7_000_000
        t = truth[r.request_id]
        assert isinstance(t["recv_ns"], int)
        # the last byte was written after the request began, and the server's read
        # of it came no earlier than 1 ms before loadgen saw the write complete
        assert r.sent_ns > r.start_ns
        assert t["recv_ns"] > r.sent_ns - 1 * MS
    _check_timing("8 MB", records, truth)
    step = summary.steps[0]
    assert step.send_ms is not None and step.send_ms.mean is not None and step.send_ms.mean > 0


def test_a_closed_loop_of_images_does_not_saturate_loadgen(run: RunFixture, scenario: Make) -> None:
    """scenarios/vision.yaml's images at concurrency 8 in a closed loop: made in line, a
    4-request batch held the loop ~0.1 s (read lag p99 ~69 ms, flagged saturated on a
    healthy mock); made by the helper ahead of demand, no request waits for its images
    and loadgen's own figures stay under their thresholds (two attempts: a busy machine)."""
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": MEDIA_ARGS}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 64},
            "output_tokens": {"dist": "fixed", "value": 48},
            "images": {
                "count": {"dist": "uniform", "min": 1, "max": 2},
                "width": {"dist": "fixed", "value": 448},
                "height": {"dist": "uniform", "min": 224, "max": 448},
                "format": "jpeg",
            },
        },
        load={"concurrency": [8], "requests_per_step": 120},
    )
    seen = []
    for _ in range(ATTEMPTS):
        summary, records, _ = run(sc)
        step = summary.steps[0]
        assert step.requests.ok == 120 and all(r.images in (1, 2) for r in records)
        health = step.client
        assert health.media_wait_p99_ms is not None
        seen.append((health.warnings, health.loop_lag_p99_ms, health.media_wait_p99_ms))
        if not health.saturated:
            break
    assert not health.saturated, seen
    assert (health.loop_lag_p99_ms or 0) < SATURATION["loop_lag_p99_ms"]
    assert health.media_wait_p99_ms < SATURATION["media_wait_p99_ms"]


def test_the_media_are_described_in_the_summary_and_every_report(
    run: RunFixture, scenario: Make
) -> None:
    """summary.json's workload names the images and audio asked for; report.md and
    report.html give the step's inputs line beside prompt tokens; the console wraps it."""
    from loadgen.report.terminal.console import format_step

    sc = scenario(
        target={"mock": {"args": MEDIA_ARGS}},
        workload={
            "images": {
                "count": {"dist": "uniform", "min": 1, "max": 2},
                "width": {"dist": "fixed", "value": 64},
                "height": {"dist": "uniform", "min": 32, "max": 48},
                "format": "jpeg",
            },
            "audio": {"seconds": {"dist": "fixed", "value": 0.5}},
        },
        load={"concurrency": [2], "requests_per_step": 6},
    )
    summary, _, out = run(sc, reports=True)
    w = summary.workload
    assert w is not None
    assert w.images == "uniform [1, 2] a request, fixed 64 x uniform [32, 48] px, jpeg"
    assert w.audio == "fixed 0.5 s a request, 16000 Hz WAV"
    step = summary.steps[0]
    assert step.media is not None
    line = f"{step.media.images_per_request:.2f} images/request"
    for name in ("report.md", "report.html"):
        text = (out / name).read_text()
        assert "images: uniform [1, 2] a request" in text, name
        assert "audio: fixed 0.5 s a request, 16000 Hz WAV" in text, name
        assert f"inputs: {line}" in text, name
        assert "s audio/s" in text and "prompt tokens/s" in text, name
    console = format_step(step).splitlines()
    assert all(len(row) <= 80 for row in console), [r for r in console if len(r) > 80]
    at = next(i for i, row in enumerate(console) if row.startswith(f"  inputs: {line}"))
    assert console[at].endswith(",") and console[at + 1].startswith("    ")  # wrapped
    assert "prompt tokens/s" in console[at + 1]


def test_transcription_streams_text_timed_as_chat(
    run: RunFixture, scenario: Make, tmp_path: Path
) -> None:
    """TTFT and ITL of a streamed transcription against the mock's truth, in one run: ITL
    within the bound chat is held to (test_ground_truth.py), TTFT within the media's."""
    truth_path = tmp_path / "truth.jsonl"
    args = ["--ttft-ms", "20", "--itl-ms", "8", "--truth", str(truth_path), *MEDIA_ARGS]
    sc = scenario(
        target={
            "api": "openai-transcriptions",
            "extra_body": {"ignore_eos": True},
            "mock": {"args": args},
        },
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 3},
            "output_tokens": {"dist": "fixed", "value": 12},
            "audio": {"seconds": {"dist": "fixed", "value": 1.5}},
        },
        load={"concurrency": [1], "requests_per_step": 20},
    )
    summary, records, _ = run(sc)
    assert summary.steps[0].requests.failed == 0, summary.steps[0].requests.errors
    truth = _truth(truth_path)
    found = Agreement()
    for r in records:
        assert r.audio_s == 1.5 and r.images == 0
        assert r.output_events == r.output_tokens_server == 12
        assert r.prompt_tokens_server == math.ceil(1.5 * PER_S) + 3
        t = truth[r.request_id]
        assert t["path"] == "/v1/audio/transcriptions"
        assert r.first_token_ns is not None
        found.add(r.first_token_ns, r.sent_ns, r.token_ns, t, r.token_slack_ns)
    # ITL as chat; TTFT as the other media requests: loadgen stamps a 48 KB body before
    # its first byte goes, the mock when its last byte came (BOUND_MS above)
    found.check("transcription", ttft_bound_ms=BOUND_MS)
    step = summary.steps[0]
    assert step.media is not None and step.media.audio_s_per_request == 1.5


def test_a_missing_dataset_image_exits_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"prompt": "look", "images": ["pics/none.png"]}\n')
    path = tmp_path / "s.yaml"
    path.write_text(
        "target: {url: mock, api: openai-chat, model: m}\n"
        "workload: {dataset: {path: d.jsonl}}\n"
        "load: {concurrency: [1], requests_per_step: 2}\n"
    )
    cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(tmp_path / "o")]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("loadgen:")]
    assert len(errors) == 1, proc.stderr
    assert f"{tmp_path / 'd.jsonl'}:1:" in errors[0]
    assert str(tmp_path / "pics" / "none.png") in errors[0]


@pytest.mark.parametrize("api", ["openai-completions", "tgi"])
def test_dataset_images_with_an_api_that_sends_none_exit_2(tmp_path: Path, api: str) -> None:
    """They were dropped unsent (the server saw text only, the run looked fine)."""
    from PIL import Image

    (tmp_path / "pics").mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "pics" / "a.png")
    rows = '{"prompt": "hi"}\n{"prompt": "look", "images": ["pics/a.png"]}\n'
    (tmp_path / "d.jsonl").write_text(rows)
    path = tmp_path / "s.yaml"
    path.write_text(
        f"target: {{url: mock, api: {api}, model: m}}\n"
        "workload: {dataset: {path: d.jsonl}}\n"
        "load: {concurrency: [1], requests_per_step: 2}\n"
    )
    cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(tmp_path / "o")]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("loadgen:")]
    assert len(errors) == 1, proc.stderr
    assert f"{tmp_path / 'd.jsonl'}:2: workload.dataset.path: images: " in errors[0]
    assert f"target.api {api} sends no images" in errors[0]
    assert not (tmp_path / "o" / "records.jsonl").exists()
