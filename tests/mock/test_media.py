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


def test_two_transcription_clips_never_share_a_cached_prefix() -> None:
    """Probe: the transcription example run reported an 86-92 % prefix-cache hit on clips
    that were all different (every clip's tokens were the same placeholders)."""
    import base64

    from loadgen.client.adapters.openai_transcriptions import multipart
    from loadgen.mock.transcribe import parse_transcription

    def tokens(seed: int) -> list[object]:
        wav = base64.b64decode(synthetic_wav(np.random.default_rng(seed), 1.0, 8000).b64)
        body = multipart({"model": "m"}, [("file", "a.wav", "audio/wav", wav)])
        spec, seconds = parse_transcription(body.data, body.content_type, None, 4096, 25.0)
        assert seconds == pytest.approx(1.0) and spec.prompt_tokens == 25
        return list(spec.tokens)

    assert not set(tokens(0)) & set(tokens(1))
    assert tokens(0) == tokens(0)  # the same clip is the same prefix
