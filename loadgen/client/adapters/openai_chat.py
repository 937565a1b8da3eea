"""OpenAI ``/v1/chat/completions``.

The opener that only carries the role (``delta: {role, content: ""}``) is not
a token; every later event whose delta has ``content`` (even empty),
``reasoning_content``/``reasoning`` or ``tool_calls`` is one token. An event
with reasoning and no ``content`` text is a reasoning token. A non-streaming
answer has ``message`` where a stream has ``delta``.

Imports: loadgen.client.adapters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadgen.client.adapters.base import Delta, as_text, is_messages
from loadgen.client.adapters.openai_common import OpenAIAdapter

if TYPE_CHECKING:
    from loadgen.workload.plan import Prompt

__all__ = ["OpenAIChat"]


def _choice(choice: dict[str, Any]) -> Delta:
    d = choice.get("delta") or choice.get("message") or {}
    text = d.get("content")
    if text:  # the common case, first
        return Delta(1, text, choice.get("finish_reason"))
    reasoning = d.get("reasoning_content")
    if reasoning is None:
        reasoning = d.get("reasoning")
    # the role-only opener is not a token; an empty content or other output is
    if reasoning is not None and (reasoning or "role" not in d):
        return Delta(1, "", choice.get("finish_reason"), reasoning=True)
    is_token = "role" not in d and (text is not None or d.get("tool_calls") is not None)
    return Delta(1 if is_token else 0, "", choice.get("finish_reason"))


class OpenAIChat(OpenAIAdapter):
    path = "/v1/chat/completions"
    path_no_stream = "/v1/chat/completions"
    read_choice = staticmethod(_choice)

    def prompt_field(self, prompt: Prompt) -> dict[str, Any]:
        """A message list is sent as is; text becomes one user message."""
        if is_messages(prompt):
            return {"messages": prompt}
        return {"messages": [{"role": "user", "content": as_text(prompt, "openai-chat")}]}
