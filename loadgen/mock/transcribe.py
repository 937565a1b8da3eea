"""``/v1/audio/transcriptions``: the multipart request and vLLM 0.32's answer to it.

The request is multipart/form-data (vLLM's ``TranscriptionRequest`` read as a
form): ``file`` (the clip), ``model``, ``stream``, ``stream_include_usage``,
``stream_continuous_usage_stats``, ``max_completion_tokens``, ``prompt``; other
fields are accepted and ignored. The clip's prompt tokens are its seconds
times ``--audio-tokens-per-second`` (a WAV's length from its header), plus
the words of ``prompt``; they are prefilled as text is.

The stream (``speech_to_text/base/serving.py``): ``transcription.chunk`` objects
with ``choices[0].delta.content`` (no role-only opener; vLLM skips an empty
delta, so no token here has empty text), the last with ``finish_reason``;
then, with ``stream_include_usage``, one with ``choices: []`` and ``usage``;
then ``data: [DONE]``. Not streamed: ``{"text", "usage": {"type": "duration",
"seconds"}}`` (seconds rounded up).
"""

from __future__ import annotations

import math
import zlib

import orjson

from loadgen.mock.events import _TEXT_JSON, _OpenAIEvents, _text
from loadgen.mock.http_framing import vllm_error
from loadgen.mock.media import wav_seconds
from loadgen.mock.request import GenSpec, Served, check_model

__all__ = ["API_TRANSCRIPTIONS", "TranscriptionEvents", "parse_multipart", "parse_transcription"]

API_TRANSCRIPTIONS = "transcriptions"


def parse_multipart(body: bytes, content_type: str) -> tuple[dict[str, str], dict[str, bytes]]:
    """(text fields, file fields) of a multipart/form-data body (vLLM's 400 if it is not)."""
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != "multipart/form-data":
        raise vllm_error(400, "expected a multipart/form-data body", "file")
    boundary = ""
    for param in params.split(";"):
        name, _, value = param.strip().partition("=")
        if name.lower() == "boundary":
            boundary = value.strip('"')
    if not boundary:
        raise vllm_error(400, "multipart/form-data without a boundary", "file")
    fields: dict[str, str] = {}
    files: dict[str, bytes] = {}
    for part in body.split(b"--" + boundary.encode())[1:]:
        if part.startswith(b"--"):
            break
        head, sep, data = part.partition(b"\r\n\r\n")
        if not sep:
            raise vllm_error(400, "a multipart part without headers", "file")
        data = data.removesuffix(b"\r\n")
        disposition: dict[str, str] = {}
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() == "content-disposition":
                for item in value.split(";"):
                    k, _, v = item.strip().partition("=")
                    disposition[k.lower()] = v.strip('"')
        field = disposition.get("name")
        if not field:
            continue
        if "filename" in disposition:
            files[field] = data
        else:
            fields[field] = data.decode("utf-8", "replace")
    return fields, files


def _flag(fields: dict[str, str], key: str) -> bool:
    return fields.get(key, "false").strip().lower() in ("true", "1", "yes", "on")


def parse_transcription(
    body: bytes,
    content_type: str,
    served_model: Served,
    max_model_len: int,
    audio_tokens_per_s: float,
) -> tuple[GenSpec, float]:
    """The request as a generation, and the clip's seconds."""
    fields, files = parse_multipart(body, content_type)
    clip = files.get("file")
    if clip is None:
        raise vllm_error(400, "Field required: file", "file")
    seconds = wav_seconds(clip[:4096])
    if seconds is None:
        raise vllm_error(400, "Invalid or unsupported audio file (loadgen-mock reads WAV)", "file")
    model = check_model({"model": fields.get("model")} if "model" in fields else {}, served_model)
    # tagged by the clip's bytes (as chat's media tokens are): two clips never share a
    # cached prefix, the same clip does
    tag = zlib.crc32(clip)
    audio = [f"<aud:{tag:08x}:{k}>" for k in range(max(1, math.ceil(seconds * audio_tokens_per_s)))]
    tokens = audio + fields.get("prompt", "").split()
    prompt_tokens = len(tokens)
    raw_max = fields.get("max_completion_tokens")
    try:
        max_tokens = int(raw_max) if raw_max else max_model_len - prompt_tokens
    except ValueError:
        raise vllm_error(400, "max_completion_tokens must be an integer", "max_tokens") from None
    if max_tokens < 1 or prompt_tokens + max_tokens > max_model_len:
        msg = f"max_completion_tokens must be in [1, {max_model_len - prompt_tokens}]"
        raise vllm_error(400, msg, "max_completion_tokens")
    stream = _flag(fields, "stream")
    usage = _flag(fields, "stream_include_usage")
    if usage and not stream:
        raise vllm_error(400, "Stream options can only be defined when `stream=True`.")
    spec = GenSpec(
        api=API_TRANSCRIPTIONS,
        stream=stream,
        model=model,
        prompt_tokens=prompt_tokens,
        max_tokens=max_tokens,
        ignore_eos=_flag(fields, "ignore_eos"),
        include_usage=usage,
        continuous_usage=usage and _flag(fields, "stream_continuous_usage_stats"),
        tokens=tokens,
    )
    return spec, seconds


class TranscriptionEvents(_OpenAIEvents):
    """vLLM's ``transcription.chunk`` stream and its JSON answer."""

    object_name = b"transcription.chunk"
    id_prefix = "trsc-"

    def __init__(
        self, rid: str, model: str, created: int, prompt_tokens: int,
        spec_usage: tuple[bool, bool], seconds: float,
    ) -> None:  # fmt: skip
        self.seconds = seconds
        super().__init__(rid, model, created, prompt_tokens, spec_usage)

    def prompt_details(self) -> bytes:
        return b""  # audio in, no prefix cache

    def _choice(self, v: int, finish: str | None) -> bytes:
        text = _TEXT_JSON[v or 1]  # vLLM sends no empty delta here
        if finish is None:
            return b'{"delta":{"content":%s}}' % text
        return b'{"delta":{"content":%s},"finish_reason":"%s","stop_reason":null}' % (
            text,
            finish.encode(),
        )

    def body(self, variants: bytes, finish: str) -> bytes:
        usage = {"type": "duration", "seconds": math.ceil(self.seconds)}
        text = _text(bytes(v or 1 for v in variants))
        return orjson.dumps({"text": text, "usage": usage})
