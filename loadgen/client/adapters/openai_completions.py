"""OpenAI ``/v1/completions``.

An event with ``choices[0].text`` (even empty) is one token; the usage event
(``choices: []``) carries the server's counts. Chat messages are sent as
plain text, one ``<role>: <content>`` line each.

Imports: loadgen.client.adapters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadgen.client.adapters.base import Delta, is_messages, render_messages
from loadgen.client.adapters.openai_common import (
    openai_body,
    parse_body,
    parse_event,
    parse_events,
)

if TYPE_CHECKING:
    from loadgen.workload.plan import Prompt

__all__ = ["OpenAICompletions"]


def _choice(choice: dict[str, Any]) -> Delta:
    text = choice.get("text")
    return Delta(0 if text is None else 1, text or "", choice.get("finish_reason"))


class OpenAICompletions:
    path = "/v1/completions"
    path_no_stream = "/v1/completions"
    ends_with_done = True

    def body(
        self,
        model: str,
        prompt: Prompt,
        max_tokens: int,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        sent = render_messages(prompt) if is_messages(prompt) else prompt
        return openai_body(
            {"model": model, "prompt": sent, "max_tokens": max_tokens}, extra, stream
        )

    def parse(self, payload: bytes) -> Delta:
        return parse_event(payload, _choice)

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        return parse_events(payloads, _choice)

    def parse_body(self, body: bytes) -> Delta:
        return parse_body(body, _choice)
