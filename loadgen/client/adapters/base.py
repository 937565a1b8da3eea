"""What every protocol adapter returns for one SSE event, and prompts as plain text.

Imports: the standard library (loadgen.workload.plan for type names only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

if TYPE_CHECKING:
    from loadgen.workload.plan import Message, Prompt

__all__ = [
    "EMPTY",
    "MAX_COUNT",
    "Adapter",
    "Delta",
    "MalformedUsage",
    "as_text",
    "count",
    "is_messages",
    "render_messages",
]

#: the largest token count a server may report; anything above is not believed
MAX_COUNT = 10_000_000


class MalformedUsage(ValueError):
    """A token count from the server that is not a non-negative integer within bounds."""


def count(value: Any, name: str) -> int | None:
    """A server's token count, checked: None stays None; else an int in 0..MAX_COUNT.

    ``bool`` is not a count, nor are floats, strings or containers.
    """
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        msg = f"{name}: expected an integer in 0..{MAX_COUNT}, got {_short(value)}"
        raise MalformedUsage(msg)
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(slots=True)
class Delta:
    """What one event meant.

    ``tokens`` is 1 when the event carries generated output (also when its
    text is empty: vLLM sends a partial UTF-8 byte as an empty-text event)
    and 0 for events that carry none (chat's role-only opener, usage).
    ``reasoning`` is True when that output was reasoning (chat's
    ``reasoning_content`` or ``reasoning`` without ``content``); ``text`` is
    answer output only.
    """

    tokens: int = 0
    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    final: bool = False  # the protocol's last event (TGI); OpenAI ends with [DONE]
    reasoning: bool = False
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens


EMPTY = Delta()


class Adapter(Protocol):
    """A wire protocol: the path, the body, one event -> :class:`Delta`, a whole body too."""

    path: str
    #: the path of a non-streaming request
    path_no_stream: str
    #: whether a well-formed stream ends with ``data: [DONE]``
    ends_with_done: bool

    def body(
        self,
        model: str,
        prompt: Prompt,
        max_tokens: int,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]: ...

    def parse(self, payload: bytes) -> Delta: ...

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        """The events of one read, as ``parse`` would read each (raises if one is bad)."""
        ...

    def parse_body(self, body: bytes) -> Delta:
        """A non-streaming response: the whole answer and the server's counts."""
        ...


def is_messages(prompt: Prompt) -> TypeGuard[list[Message]]:
    """A chat message list (not text, not token ids)."""
    return isinstance(prompt, list) and bool(prompt) and isinstance(prompt[0], dict)


def render_messages(messages: list[Message]) -> str:
    """Messages as plain text for a text-only API: ``<role>: <content>`` lines, newline-joined."""
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)


def as_text(prompt: Prompt, api: str) -> str:
    """Text as is, messages rendered as text; token ids are refused (TypeError naming ``api``)."""
    if is_messages(prompt):
        return render_messages(prompt)
    if isinstance(prompt, str):
        return prompt
    raise TypeError(f"{api} takes text or chat messages, not token ids")
