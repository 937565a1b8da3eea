"""Images and audio in a request, as a vision or audio model counts them: prompt tokens.

Images come as chat ``image_url`` parts, Responses ``input_image`` parts or
Anthropic ``image`` blocks (base64 ``source``); audio as chat ``input_audio``.
A real multimodal server turns each image into placeholder tokens (about
width x height / patch^2 of them) and each audio clip into tokens per
second of sound, and counts them in ``usage.prompt_tokens``; the mock does
the same with two knobs: ``--image-tokens-per-megapixel`` and
``--audio-tokens-per-second``. In engine mode those tokens are prefilled like
text, so an image costs prefill time in proportion to its pixels.

The sizes are read from the files' headers, never by decoding them whole:
PNG's IHDR, JPEG's first SOF marker, GIF/WebP/BMP are not read (an image
whose size cannot be read counts as one megapixel); WAV's fmt and data
chunks. A ``data:`` URL's base64 is decoded only as far as the header needs.

Each medium's tokens are distinct words (a prefix of its bytes in them), so
two different images never look like one shared prefix to the prefix cache.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

__all__ = [
    "DEFAULT_AUDIO_TOKENS_PER_S",
    "DEFAULT_IMAGE_TOKENS_PER_MP",
    "audio_seconds",
    "image_size",
    "media_tokens",
]

#: Qwen2-VL's 28 x 28 pixels a token: 1e6 / 784, rounded
DEFAULT_IMAGE_TOKENS_PER_MP = 1280.0
#: Qwen2-Audio's encoder: 25 tokens per second of sound
DEFAULT_AUDIO_TOKENS_PER_S = 25.0
#: base64 characters decoded to find a JPEG's SOF (Pillow writes it within a few KB)
_JPEG_HEAD = 65536


def _head(b64: str, chars: int) -> bytes:
    """The first bytes of base64 text (``chars`` characters of it, cut to a multiple of 4)."""
    cut = b64[: chars - chars % 4]
    try:
        return base64.b64decode(cut, validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_size(b64: str) -> tuple[int, int] | None:
    """(width, height) of a base64 PNG or JPEG, from its header; None if unreadable."""
    head = _head(b64, 64)
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return int(w), int(h)
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(_head(b64, _JPEG_HEAD))
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        i += 2 + length
    return None


def audio_seconds(b64: str) -> float | None:
    """Seconds of a base64 WAV, from its fmt and data chunk headers; None if unreadable."""
    return wav_seconds(_head(b64, 4096))


def wav_seconds(head: bytes) -> float | None:
    """Seconds of a WAV file whose first bytes are ``head``."""
    if not (head.startswith(b"RIFF") and head[8:12] == b"WAVE"):
        return None
    i, byte_rate = 12, 0
    while i + 8 <= len(head):
        kind, size = head[i : i + 4], int.from_bytes(head[i + 4 : i + 8], "little")
        if kind == b"fmt " and i + 16 <= len(head):
            byte_rate = int.from_bytes(head[i + 16 : i + 20], "little")
        elif kind == b"data":
            return size / byte_rate if byte_rate else None
        i += 8 + size + size % 2
    return None


def media_tokens(
    part: dict[str, object], index: int, per_mp: float, per_s: float
) -> list[str] | None:
    """The tokens of one chat content part that is an image or audio; None for any other
    part. ``index`` numbers the medium within the request (it is in its tokens)."""
    kind = part.get("type")
    if kind in ("image_url", "input_image"):  # chat's {"url": ...}; Responses' URL string
        spec = part.get("image_url")
        url = spec.get("url") if isinstance(spec, dict) else spec
        if not isinstance(url, str):
            return None
        b64 = url.partition(",")[2] if url.startswith("data:") else ""
        return _image(b64, url, index, per_mp)
    if kind == "image":  # Anthropic: {"source": {"type": "base64", "data": ...}} or a URL
        source = part.get("source")
        if not isinstance(source, dict):
            return None
        data, url = source.get("data"), source.get("url")
        if isinstance(data, str):
            return _image(data, data, index, per_mp)
        return _image("", url, index, per_mp) if isinstance(url, str) else None
    if kind == "input_audio":
        spec = part.get("input_audio")
        data = spec.get("data") if isinstance(spec, dict) else None
        if not isinstance(data, str):
            return None
        seconds = audio_seconds(data) or 0.0
        return _tokens("aud", data, index, math.ceil(seconds * per_s))
    return None


def _image(b64: str, key: str, index: int, per_mp: float) -> list[str]:
    """An image's tokens: its megapixels (one when its size cannot be read) x ``per_mp``."""
    size = image_size(b64) if b64 else None
    mp = size[0] * size[1] / 1e6 if size else 1.0
    return _tokens("img", b64 or key, index, math.ceil(mp * per_mp))


def _tokens(kind: str, data: str, index: int, n: int) -> list[str]:
    tag = data[len(data) // 2 : len(data) // 2 + 16]
    return [f"<{kind}{index}:{tag}:{k}>" for k in range(max(1, n))]
