"""Images on real vLLM: ``workload.images`` sent to a tiny random vision-language model.

One server of this module's own (``vllm_vlm``: tiny-vlm, a random Idefics3 that
``vllm-cpu.sh vlm`` builds, stopped when the module ends). vLLM turns every
image, whatever its size, into ``IMAGE_TOKENS`` prompt tokens (the image is
resized to one 224 px square: ``<fake_token_around_image><global-img>``, 49
``<image>``, ``<fake_token_around_image>``). With the model's tokenizer the
text part is planned exactly, so the server's ``usage.prompt_tokens`` must be
the planned text plus ``IMAGE_TOKENS`` per image, request by request: the
images arrived, were decoded and counted. The requests go through the
recording proxy (``tap.Tap``), so the images loadgen records are checked
against the ones on the wire (decoded again here, size by size).
"""

from __future__ import annotations

import base64
import io
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from PIL import Image

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import StepSummary, Summary
from tests.integration.vllm.tap import Exchange, Tap

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

Build = Callable[..., Scenario]
N = 12
PROMPT, OUTPUT = 24, 8
IMAGE_TOKENS = 52  # tiny-vlm's image_seq_len (49) + its three tags
MS = 1e6


def in_steady_window(step: StepSummary, records: list[Record]) -> list[Record]:
    """The records the step's media figures count: those that ended in its steady window."""
    if step.steady_started_ns is None or step.steady_ended_ns is None:
        return records
    return [r for r in records if step.steady_started_ns < r.end_ns <= step.steady_ended_ns]


def image_tokens(server: VllmServer) -> int:
    """From the model's own processor config: what the builder says an image costs."""
    config = json.loads((server.model_dir / "processor_config.json").read_text())
    return int(config["image_seq_len"]) + 3


def run_images(
    server: VllmServer, scenario: Build, out: Path, api: str, images: dict[str, Any] | None
) -> tuple[Summary, list[Record], dict[str, Exchange]]:
    with Tap(server.url) as tap:
        sc = scenario(
            target={
                "url": tap.root,
                "api": api,
                "model": server.model,
                "extra_body": {"ignore_eos": True},
                "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
            },
            workload={
                "seed": 5,
                "tokenizer": str(server.model_dir),
                "prompt_tokens": {"dist": "fixed", "value": PROMPT},
                "output_tokens": {"dist": "fixed", "value": OUTPUT},
                **({"images": images} if images else {}),
            },
            load={"mode": "concurrency", "concurrency": [2], "requests_per_step": N},
        )
        summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
        wire = tap.exchanges()
    records = list(read_records(out / "records.jsonl"))
    assert summary.steps[0].requests.ok == N, [r.error_detail for r in records]
    for r in records:
        assert r.ok and r.http_status == 200 and wire[r.request_id].status == 200
        assert r.output_tokens_server == OUTPUT
    return summary, records, wire


def sent_images(api: str, body: dict[str, Any]) -> list[tuple[int, int]]:
    """(width, height) of each image in a request body, decoded from its base64."""
    content = body["input" if api == "openai-responses" else "messages"][-1]["content"]
    found = []
    for part in content:
        if part["type"] == "image_url":  # chat
            data = part["image_url"]["url"].split(",", 1)[1]
        elif part["type"] == "input_image":  # Responses
            data = part["image_url"].split(",", 1)[1]
        elif part["type"] == "image":  # Messages
            data = part["source"]["data"]
        else:
            continue
        found.append(Image.open(io.BytesIO(base64.b64decode(data))).size)
    return found


def ttft_ms(records: list[Record]) -> float:
    values = [(r.first_token_ns - r.sent_ns) / MS for r in records if r.first_token_ns]
    assert len(values) == len(records)
    return statistics.median(values)


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_images_are_counted_in_the_servers_prompt_tokens(
    vllm_vlm: VllmServer, scenario: Build, tmp_path: Path, api: str
) -> None:
    per_image = image_tokens(vllm_vlm)
    assert per_image == IMAGE_TOKENS
    _, text_only, _ = run_images(vllm_vlm, scenario, tmp_path / "text", api, None)
    images = {
        "count": {"dist": "uniform", "min": 1, "max": 3},
        "width": {"dist": "uniform", "min": 48, "max": 400},
        "height": {"dist": "uniform", "min": 48, "max": 300},
        "format": "jpeg",
    }
    summary, records, wire = run_images(vllm_vlm, scenario, tmp_path / "images", api, images)

    # the text alone is planned exactly (Responses: one token more, docs/vllm-cpu.md)
    extra = 1 if api == "openai-responses" else 0
    assert {r.prompt_tokens_server - r.prompt_tokens_requested for r in text_only} == {extra}
    for r in records:
        sizes = sent_images(api, wire[r.request_id].json_body())
        assert r.images == len(sizes) >= 1
        assert r.image_pixels == sum(w * h for w, h in sizes)
        assert r.prompt_tokens_server == r.prompt_tokens_requested + extra + per_image * r.images
        assert r.first_token_ns is not None and r.sent_ns <= r.first_token_ns <= r.end_ns
    assert len({r.images for r in records}) > 1  # counts really drawn per request
    step = summary.steps[0]
    assert step.media is not None
    counted = in_steady_window(step, records)
    assert step.media.images_per_request == sum(r.images for r in counted) / len(counted)
    assert step.tokens.input_total == sum(r.prompt_tokens_server or 0 for r in records)
    assert step.prompt_lengths.compared == 0  # media requests are not length-checked
    # sane TTFTs: positive, under the first-token timeout by far
    text_ttft, image_ttft = ttft_ms(text_only), ttft_ms(records)
    assert 0 < text_ttft < 10_000 and 0 < image_ttft < 10_000
    mean_text = statistics.mean(r.prompt_tokens_server or 0 for r in text_only)
    mean_images = statistics.mean(r.prompt_tokens_server or 0 for r in records)
    print(
        f"{api}: prompt tokens {mean_text:.1f} text only, {mean_images:.1f} with "
        f"{sum(r.images for r in records) / N:.2f} images/request ({per_image} each); "
        f"TTFT p50 {text_ttft:.1f} ms text only, {image_ttft:.1f} ms with images"
    )
