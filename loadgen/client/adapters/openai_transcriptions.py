"""OpenAI ``/v1/audio/transcriptions``: a WAV clip up as multipart/form-data, text back.

The request (vLLM ``entrypoints/speech_to_text/transcription/protocol.py``,
``TranscriptionRequest`` read as form fields): ``file`` (the clip), ``model``,
``stream``, ``stream_include_usage`` (the usage chunk at the end),
``max_completion_tokens``, ``response_format: json``; the prompt text, if
any, goes as ``prompt`` (Whisper's decoder prompt: ``workload.prompt_tokens``
words of it; keep it short). ``extra_body`` keys
become more form fields (a value that is not a string as JSON, so
``vllm_xargs`` works; true/false as ``true``/``false``).

The stream (``base/serving.py``, ``_speech_to_text_stream_generator``): SSE
``transcription.chunk`` objects shaped as chat chunks, ``choices[0].delta.content``
with no role-only opener; then, asked for, a chunk with ``choices: []`` and
``usage`` (prompt tokens include the audio's); then ``[DONE]``. A non-streaming
answer is ``{"text": ..., "usage": {"type": "duration", "seconds": N}}``: no token
counts, so its output is counted as one event.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

import orjson

from loadgen.client.adapters.base import NO_HEADERS, Delta, RawBody, as_text, bearer
from loadgen.client.adapters.event_values import MalformedEvent, obj, string
from loadgen.client.adapters.openai_chat import read_chat_choice
from loadgen.client.adapters.openai_common import parse_event, parse_events

if TYPE_CHECKING:
    from loadgen.workload import RequestSpec

__all__ = ["OpenAITranscriptions", "multipart"]


def multipart(fields: dict[str, str], files: list[tuple[str, str, str, bytes]]) -> RawBody:
    """A multipart/form-data body: text ``fields``, then (name, filename, type, bytes) files."""
    boundary = f"loadgen-{secrets.token_hex(12)}"
    dash = f"--{boundary}\r\n".encode()
    parts: list[bytes] = []
    for name, value in fields.items():
        head = f'Content-Disposition: form-data; name="{name}"\r\n\r\n'
        parts += [dash, head.encode(), value.encode(), b"\r\n"]
    for name, filename, ctype, data in files:
        head = (
            f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            f"Content-Type: {ctype}\r\n\r\n"
        )
        parts += [dash, head.encode(), data, b"\r\n"]
    parts.append(f"--{boundary}--\r\n".encode())
    return RawBody(b"".join(parts), f"multipart/form-data; boundary={boundary}")


def _form_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return orjson.dumps(value).decode()


class OpenAITranscriptions:
    """Chat's event reading (the chunks are chat-shaped); its own body and whole answer."""

    path = "/v1/audio/transcriptions"
    path_no_stream = "/v1/audio/transcriptions"
    ends_with_done = True
    headers = NO_HEADERS
    auth_headers = staticmethod(bearer)

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> RawBody:
        audio = next((m for m in spec.media if m.kind == "audio"), None)
        if audio is None:
            raise ValueError("openai-transcriptions needs an audio clip (workload.audio)")
        fields = {
            "model": model,
            "response_format": "json",
            "max_completion_tokens": str(spec.max_tokens),
            "stream": "true" if stream else "false",
        }
        if stream:
            fields["stream_include_usage"] = "true"
        if text := as_text(spec.prompt, "openai-transcriptions"):
            fields["prompt"] = text
        fields.update({k: _form_value(v) for k, v in extra.items()})
        return multipart(fields, [("file", "audio.wav", audio.mime, audio.raw())])

    def parse(self, payload: bytes) -> Delta:
        return parse_event(payload, read_chat_choice)

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        return parse_events(payloads, read_chat_choice)

    def parse_body(self, body: bytes) -> Delta:
        """``{"text", "usage": {"type": "duration", "seconds"}}``: the text, no token counts."""
        value = obj(orjson.loads(body), "body")
        if "error" in value:
            raise MalformedEvent(f"an error body: {str(value['error'])[:120]}")
        text = string(value.get("text"), "text")
        if text is None:
            raise MalformedEvent("a transcription without text")
        return Delta(0, text, "stop")
