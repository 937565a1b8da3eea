"""A request's text and media as each API's content parts: one builder per API.

- OpenAI chat: ``{"type": "text", "text"}``, ``{"type": "image_url", "image_url":
  {"url": "data:image/png;base64,..."}}`` and ``{"type": "input_audio",
  "input_audio": {"data": <base64>, "format": "wav"}}`` (vLLM
  ``entrypoints/chat_utils.py`` parses these).
- OpenAI Responses: ``{"type": "input_text", "text"}`` and ``{"type":
  "input_image", "image_url": "data:..."}`` (the URL is a string there, not an
  object; ``detail`` is optional). Called by the Responses adapter.
- Anthropic Messages: ``{"type": "text", "text"}`` and ``{"type": "image",
  "source": {"type": "base64", "media_type": "image/png", "data": <base64>}}``.
  Called by the Messages adapter.

Media go before the text, as the APIs' own examples put them. Each builder
returns a list of parts for one user message's ``content``; the caller
decides where that message goes. :func:`with_media` does it for a message
list (chat's, Responses input items, Messages ``messages``): the last user
message gets the parts of the builder given (chat's by default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from loadgen.workload import Media, Message

__all__ = ["chat_parts", "messages_parts", "responses_parts", "with_media"]

Part = dict[str, Any]
#: what an audio clip's mime type is called in chat's ``input_audio.format``
_AUDIO_FORMAT = {"audio/wav": "wav", "audio/mpeg": "mp3"}


def chat_parts(text: str, media: tuple[Media, ...]) -> list[Part]:
    """OpenAI chat content: ``image_url`` and ``input_audio`` parts, then the text."""
    parts: list[Part] = []
    for m in media:
        if m.kind == "image":
            parts.append({"type": "image_url", "image_url": {"url": m.data_url}})
        else:
            fmt = _AUDIO_FORMAT.get(m.mime, "wav")
            parts.append({"type": "input_audio", "input_audio": {"data": m.b64, "format": fmt}})
    parts.append({"type": "text", "text": text})
    return parts


def responses_parts(text: str, media: tuple[Media, ...]) -> list[Part]:
    """OpenAI Responses ``input`` content: ``input_image`` parts (images only), then
    ``input_text``. Audio has no Responses input part in vLLM 0.32: refused (ValueError)."""
    parts: list[Part] = []
    for m in media:
        if m.kind != "image":
            raise ValueError("the Responses API takes no audio input")
        parts.append({"type": "input_image", "image_url": m.data_url})
    parts.append({"type": "input_text", "text": text})
    return parts


def messages_parts(text: str, media: tuple[Media, ...]) -> list[Part]:
    """Anthropic Messages content: base64 ``image`` blocks, then the text block.
    The Messages API takes no audio (ValueError)."""
    parts: list[Part] = []
    for m in media:
        if m.kind != "image":
            raise ValueError("the Anthropic Messages API takes no audio input")
        source = {"type": "base64", "media_type": m.mime, "data": m.b64}
        parts.append({"type": "image", "source": source})
    parts.append({"type": "text", "text": text})
    return parts


def with_media(
    messages: Sequence[Message | dict[str, Any]],
    media: tuple[Media, ...],
    build: Callable[[str, tuple[Media, ...]], list[Part]] = chat_parts,
) -> list[dict[str, Any]]:
    """Messages whose last user message carries ``media`` as ``build``'s content parts
    (a copy: the planned messages are not changed)."""
    out = cast("list[dict[str, Any]]", list(messages))
    for i in range(len(out) - 1, -1, -1):
        if out[i]["role"] == "user":
            out[i] = {**out[i], "content": build(out[i]["content"], media)}
            break
    return out
