"""What every protocol adapter returns for one SSE event.

Imports: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["EMPTY", "Adapter", "Delta"]


@dataclass(slots=True)
class Delta:
    """What one event meant.

    ``tokens`` is 1 when the event carries generated output (also when its
    text is empty: vLLM sends a partial UTF-8 byte as an empty-text event)
    and 0 for events that carry none (chat's role-only opener, usage).
    """

    tokens: int = 0
    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    final: bool = False  # the protocol's last event (TGI); OpenAI ends with [DONE]


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
        prompt: str | list[int],
        max_tokens: int,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]: ...

    def parse(self, payload: bytes) -> Delta: ...

    def parse_body(self, body: bytes) -> Delta:
        """A non-streaming response: the whole answer and the server's counts."""
        ...
