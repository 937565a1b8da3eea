"""What OpenAI completions and chat share: event and body skeletons, usage, errors.

An adapter (a subclass of :class:`OpenAIAdapter`) supplies only its path, how
the prompt goes into the body and how one ``choices[0]`` becomes a
:class:`Delta`; the rest (JSON, the usage block with its reasoning count,
in-stream errors, the request body's stream options) is here once.

Every value is read through :mod:`loadgen.client.adapters.event_values`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from loadgen.client.adapters.base import EMPTY, NO_HEADERS, Delta, bearer
from loadgen.client.adapters.event_values import (
    MalformedEvent,
    count,
    error_message,
    first_choice,
    json_values,
    obj,
)

if TYPE_CHECKING:
    from loadgen.workload import Prompt, RequestSpec

__all__ = [
    "ChoiceReader",
    "OpenAIAdapter",
    "event_from",
    "openai_body",
    "parse_body",
    "parse_event",
    "parse_events",
    "read_usage",
]

#: ``choices[0]`` of an event or body -> the delta it carries
ChoiceReader = Callable[[dict[str, Any]], Delta]


def openai_body(fields: dict[str, Any], extra: dict[str, Any], stream: bool) -> dict[str, Any]:
    """``fields`` plus the stream switches (usage in the stream), then ``extra`` on top."""
    body = {**fields, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return {**body, **extra}


def parse_event(payload: bytes, read_choice: ChoiceReader) -> Delta:
    return event_from(orjson.loads(payload), read_choice)


def parse_events(payloads: list[bytes], read_choice: ChoiceReader) -> list[Delta]:
    """Several events of one read (:func:`~loadgen.client.adapters.event_values.json_values`).

    Raises (a ValueError) if any is not an event, or if the joined
    text does not split back into exactly one value per payload; the caller
    then parses them one by one to find where.
    """
    return [event_from(value, read_choice) for value in json_values(payloads)]


def event_from(value: Any, read_choice: ChoiceReader) -> Delta:
    """One parsed event's meaning (:class:`MalformedEvent` if it is not of the protocol)."""
    event = obj(value, "event")
    choice = first_choice(event.get("choices"))
    usage = event.get("usage")
    if choice is not None:
        delta = read_choice(choice)
    elif "error" in event:
        return Delta(error=error_message(event["error"]))
    elif usage is None:
        return EMPTY
    else:
        delta = Delta()
    if usage:
        read_usage(delta, usage, "usage", "prompt_tokens", "completion_tokens")
    return delta


def read_usage(delta: Delta, usage: Any, block: str, prompt_key: str, output_key: str) -> None:
    """An OpenAI usage block's counts (``block`` names it in messages): ``prompt_key``,
    ``output_key``, ``<output_key>_details.reasoning_tokens`` and
    ``<prompt_key>_details.cached_tokens`` (chat's ``prompt_tokens``, ``completion_tokens``;
    Responses' ``input_tokens``, ``output_tokens``), each checked. A details object that is
    null or absent says nothing (vLLM sends ``prompt_tokens_details`` only with
    ``--enable-prompt-tokens-details``). A block that cannot be believed is ignored whole
    (``delta.usage_ignored`` says why) and the request is measured from its stream."""
    try:
        checked = obj(usage, block)
        prompt = count(checked.get(prompt_key), f"usage.{prompt_key}")
        output = count(checked.get(output_key), f"usage.{output_key}")
        reasoning = _detail(checked, f"{output_key}_details", "reasoning_tokens")
        cached = _detail(checked, f"{prompt_key}_details", "cached_tokens")
    except MalformedEvent as exc:
        delta.usage_ignored = str(exc)
        return
    delta.prompt_tokens, delta.completion_tokens, delta.reasoning_tokens = (
        prompt,
        output,
        reasoning,
    )
    if prompt is not None:
        delta.cached_tokens = cached


def _detail(usage: dict[str, Any], details_key: str, key: str) -> int | None:
    """``usage[details_key][key]``, checked; None when the details object is null or absent."""
    if not (details := usage.get(details_key)):
        return None
    return count(obj(details, f"usage.{details_key}").get(key), f"usage.{details_key}.{key}")


def parse_body(body: bytes, read_choice: ChoiceReader) -> Delta:
    """A non-streaming answer: the same reading as one event, never counted as a token event."""
    delta = parse_event(body, read_choice)
    delta.tokens = 0
    return delta


class OpenAIAdapter:
    """The skeleton of an OpenAI adapter: the same path streaming or not, ``[DONE]`` at the end.

    A subclass sets ``path`` and ``path_no_stream``, and says where the prompt
    goes (:meth:`prompt_field`) and how one choice reads (:meth:`read_choice`).
    """

    path: str
    path_no_stream: str
    ends_with_done = True
    #: body fields beside the prompt sent with every request (tools, response_format), under
    #: ``extra_body``: built once by the adapter's constructor
    output_fields: dict[str, Any] = {}  # noqa: RUF012 (read only; an instance sets its own)
    headers = NO_HEADERS
    auth_headers = staticmethod(bearer)

    def prompt_field(self, prompt: Prompt) -> dict[str, Any]:
        """The body's prompt field: ``{"prompt": ...}`` or ``{"messages": ...}``."""
        raise NotImplementedError

    @staticmethod
    def read_choice(choice: dict[str, Any]) -> Delta:
        raise NotImplementedError

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = True,
    ) -> dict[str, Any]:
        fields = {"model": model, **self.prompt_field(spec.prompt), "max_tokens": spec.max_tokens}
        if self.output_fields:
            fields.update(self.output_fields)
        return openai_body(fields, extra, stream)

    def parse(self, payload: bytes) -> Delta:
        return parse_event(payload, self.read_choice)

    def parse_many(self, payloads: list[bytes]) -> list[Delta]:
        return parse_events(payloads, self.read_choice)

    def parse_body(self, body: bytes) -> Delta:
        return parse_body(body, self.read_choice)
