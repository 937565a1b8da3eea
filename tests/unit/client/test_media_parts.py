"""A request's media as each API's content parts, and the transcription upload."""

from __future__ import annotations

import numpy as np

from loadgen.client.adapters import ADAPTERS
from loadgen.client.adapters.base import RawBody
from loadgen.client.adapters.media_parts import chat_parts, messages_parts, responses_parts
from loadgen.mock.transcribe import parse_multipart
from loadgen.workload.media import synthetic_image, synthetic_wav
from loadgen.workload.plan import RequestSpec

IMG = synthetic_image(np.random.default_rng(0), 8, 4, "png")
WAV = synthetic_wav(np.random.default_rng(0), 0.25, 8000)


def test_chat_parts_carry_images_and_audio_before_the_text() -> None:
    assert chat_parts("hi", (IMG, WAV)) == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + IMG.b64}},
        {"type": "input_audio", "input_audio": {"data": WAV.b64, "format": "wav"}},
        {"type": "text", "text": "hi"},
    ]


def test_responses_and_messages_parts() -> None:
    assert responses_parts("hi", (IMG,)) == [
        {"type": "input_image", "image_url": "data:image/png;base64," + IMG.b64},
        {"type": "input_text", "text": "hi"},
    ]
    source = {"type": "base64", "media_type": "image/png", "data": IMG.b64}
    assert messages_parts("hi", (IMG,)) == [
        {"type": "image", "source": source},
        {"type": "text", "text": "hi"},
    ]


def test_the_chat_body_puts_the_parts_in_the_last_user_message() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    spec = RequestSpec(0, messages, 3, 8, media=(IMG,))
    body = ADAPTERS["openai-chat"].body(spec, "m", {})
    assert isinstance(body, dict)
    assert body["messages"][:2] == messages[:2]
    assert body["messages"][2]["content"][0]["type"] == "image_url"
    assert body["messages"][2]["content"][1] == {"type": "text", "text": "c"}
    assert messages[2]["content"] == "c"  # the planned messages are not changed


def test_the_transcription_body_is_multipart_with_the_clip() -> None:
    spec = RequestSpec(0, "a short prompt", 3, 32, media=(WAV,))
    body = ADAPTERS["openai-transcriptions"].body(spec, "whisper", {"temperature": 0.5})
    assert isinstance(body, RawBody)
    assert body.content_type.startswith("multipart/form-data; boundary=")
    fields, files = parse_multipart(body.data, body.content_type)
    assert files == {"file": WAV.raw()}
    assert fields == {
        "model": "whisper",
        "response_format": "json",
        "max_completion_tokens": "32",
        "stream": "true",
        "stream_include_usage": "true",
        "prompt": "a short prompt",
        "temperature": "0.5",
    }


def test_transcription_chunks_read_as_chat_ones() -> None:
    a = ADAPTERS["openai-transcriptions"]
    d = a.parse(b'{"object":"transcription.chunk","choices":[{"delta":{"content":" hi"}}]}')
    assert (d.tokens, d.text) == (1, " hi")
    usage = b'{"choices":[],"usage":{"prompt_tokens":9,"total_tokens":12,"completion_tokens":3}}'
    assert (a.parse(usage).prompt_tokens, a.parse(usage).completion_tokens) == (9, 3)
    whole = a.parse_body(b'{"text":"hello there","usage":{"type":"duration","seconds":2}}')
    assert (whole.text, whole.tokens) == ("hello there", 0)
