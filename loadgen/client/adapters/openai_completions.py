"""OpenAI ``/v1/completions``.

An event with ``choices[0].text`` (even empty) is one token; the usage event
(``choices: []``) carries the server's counts. Chat messages are sent as
plain text, one ``<role>: <content>`` line each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadgen.client.adapters.base import Delta, is_messages, render_messages
from loadgen.client.adapters.event_values import reason, string
from loadgen.client.adapters.openai_common import OpenAIAdapter

if TYPE_CHECKING:
    from loadgen.workload import Prompt

__all__ = ["OpenAICompletions"]


def _choice(choice: dict[str, Any]) -> Delta:
    text = choice.get("text")
    finish = choice.get("finish_reason")
    if finish is None and type(text) is str:  # the common case, checked inline
        return Delta(1, text)
    text = string(text, "choices[0].text")
    finish = reason(finish, "choices[0].finish_reason")
    return Delta(0 if text is None else 1, text or "", finish)


class OpenAICompletions(OpenAIAdapter):
    path = "/v1/completions"
    path_no_stream = "/v1/completions"
    read_choice = staticmethod(_choice)

    def prompt_field(self, prompt: Prompt) -> dict[str, Any]:
        """Text or token ids as they are; messages as text."""
        return {"prompt": render_messages(prompt) if is_messages(prompt) else prompt}
