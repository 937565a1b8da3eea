"""The mock counts images by their pixels and audio by its seconds, as prompt tokens."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.client.adapters.media_parts import chat_parts
from loadgen.mock.media import audio_seconds, image_size
from loadgen.mock.request import message_tokens_of
from loadgen.workload.media import synthetic_image, synthetic_wav


@pytest.mark.parametrize("fmt", ["png", "jpeg"])
def test_image_sizes_come_from_the_header(fmt: str) -> None:
    m = synthetic_image(np.random.default_rng(0), 300, 170, fmt)
    assert image_size(m.b64) == (300, 170)


def test_wav_seconds_come_from_the_header() -> None:
    m = synthetic_wav(np.random.default_rng(0), 2.5, 16000)
    assert audio_seconds(m.b64) == pytest.approx(2.5)


def test_media_are_prompt_tokens_in_proportion_to_their_size() -> None:
    img = synthetic_image(np.random.default_rng(0), 1000, 500, "jpeg")  # 0.5 MP
    wav = synthetic_wav(np.random.default_rng(0), 2.0, 8000)
    messages = [{"role": "user", "content": chat_parts("two words", (img, wav))}]
    tokens = message_tokens_of(messages, 100.0, 10.0)
    assert len(tokens) == 50 + 20 + 2
    other = synthetic_image(np.random.default_rng(1), 1000, 500, "jpeg")
    again = message_tokens_of([{"role": "user", "content": chat_parts("x", (other,))}], 100, 10)
    assert not set(tokens) & set(again[:50])  # two images never share a cached prefix
