"""Responses (``/v1/responses``) and Messages (``/v1/messages``) bodies -> ``GenSpec``.

Owns what these two APIs ask for, validated as vLLM 0.32 validates them, and
the conversations the Responses API keeps (:class:`Conversations`): an answer
stored under its response id (``store``, true unless the body says false)
is the context of a later request that names it in ``previous_response_id``;
its tokens (the earlier prompt and the answer's text) count as that
request's prompt tokens and come first in what the prefix cache sees. An
unknown id is vLLM's 404. The map is bounded (:data:`MAX_CONVERSATIONS`, the
oldest forgotten first). Messages errors are Anthropic's shape (``{"type":
"error", "error": {...}}``, as vLLM translates them). Images in either API's
input count as prompt tokens as in chat (``media_rates``,
:mod:`loadgen.mock.media`); tools, Responses' ``text.format`` and Messages'
``output_config.format`` are read by
:mod:`loadgen.mock.structured_apis`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson

from loadgen.mock.http_framing import HttpError, vllm_error
from loadgen.mock.media import DEFAULT_AUDIO_TOKENS_PER_S, DEFAULT_IMAGE_TOKENS_PER_MP
from loadgen.mock.request import GenSpec, Served, check_model, load_json, message_tokens_of
from loadgen.mock.structured_apis import messages_structured, responses_structured

__all__ = [
    "API_MESSAGES",
    "API_RESPONSES",
    "MAX_CONVERSATIONS",
    "Conversations",
    "anthropic_error",
    "parse_messages",
    "parse_responses",
]

API_RESPONSES = "responses"
API_MESSAGES = "messages"
#: most stored responses kept for previous_response_id (oldest forgotten first)
MAX_CONVERSATIONS = 4096

_ANTHROPIC_TYPES = {400: "invalid_request_error", 404: "not_found_error", 500: "api_error"}


def anthropic_error(status: int, message: str) -> HttpError:
    """vLLM's Messages error: ``{"type": "error", "error": {"type", "message"}}``."""
    kind = _ANTHROPIC_TYPES.get(status, "api_error")
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return HttpError(status, orjson.dumps(body))


class Conversations:
    """Stored responses: id -> the tokens of the whole conversation up to its answer."""

    def __init__(self, limit: int = MAX_CONVERSATIONS) -> None:
        self._limit = limit
        self._map: OrderedDict[str, list[str]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._map)

    def get(self, response_id: str) -> list[str] | None:
        return self._map.get(response_id)

    def keep(self, response_id: str, tokens: list[str]) -> None:
        self._map[response_id] = tokens
        self._map.move_to_end(response_id)
        while len(self._map) > self._limit:
            self._map.popitem(last=False)


def _limit(prompt: int, max_tokens: int | None, max_model_len: int, err: Any) -> int:
    if max_tokens is None:
        max_tokens = max_model_len - prompt
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise err(400, "max output tokens must be a positive integer")
    if prompt + max_tokens > max_model_len:
        msg = (
            f"This model's maximum context length is {max_model_len} tokens. However, you "
            f"requested {prompt + max_tokens} tokens ({prompt} in the messages, "
            f"{max_tokens} in the completion). Please reduce the length of the messages or "
            "completion."
        )
        raise err(400, msg)
    return max_tokens


#: prompt tokens per megapixel of an image, per second of audio (the defaults)
_RATES = (DEFAULT_IMAGE_TOKENS_PER_MP, DEFAULT_AUDIO_TOKENS_PER_S)


def _input_tokens(value: Any, rates: tuple[float, float]) -> list[str]:
    """The words of a Responses ``input``: text, or items with ``content`` text or parts
    (``input_image`` parts count as their pixels' tokens)."""
    if isinstance(value, str):
        return value.split()
    if not isinstance(value, list) or not value:
        raise vllm_error(400, "input must be a string or a non-empty list of items", "input")
    items = [{"role": "user", **v} if isinstance(v, dict) else v for v in value]
    return message_tokens_of(items, *rates)


def parse_responses(
    body: bytes,
    served_model: Served,
    max_model_len: int,
    conversations: Conversations,
    media_rates: tuple[float, float] = _RATES,
) -> GenSpec:
    """Validate a ``/v1/responses`` body (``input``, ``max_output_tokens``, ``stream``,
    ``store``, ``previous_response_id``, ``instructions``, ``tools``, ``tool_choice``,
    ``text.format``; vLLM's ``ignore_eos``)."""
    data = load_json(body, tgi=False)
    model = check_model(data, served_model)
    if "input" not in data:
        raise vllm_error(400, "input is required", "input")
    tokens = _input_tokens(data["input"], media_rates)
    instructions = data.get("instructions")
    if isinstance(instructions, str):
        tokens = instructions.split() + tokens
    previous = data.get("previous_response_id")
    context: list[str] = []
    if previous is not None:
        found = conversations.get(previous) if isinstance(previous, str) else None
        if found is None:
            msg = f"Response with id '{previous}' not found."
            error = {
                "error": {
                    "message": msg,
                    "type": "invalid_request_error",
                    "param": "response_id",
                    "code": 404,
                }
            }
            raise HttpError(404, orjson.dumps(error))
        context = found
    tokens = context + tokens
    max_tokens = _limit(len(tokens), data.get("max_output_tokens"), max_model_len, vllm_error)
    store = data.get("store")
    return GenSpec(
        api=API_RESPONSES,
        stream=bool(data.get("stream", False)),
        model=model,
        prompt_tokens=len(tokens),
        max_tokens=max_tokens,
        ignore_eos=bool(data.get("ignore_eos", False)),
        include_usage=True,
        tokens=tokens,
        store=store is None or bool(store),
        context_tokens=len(context),
        previous_id=previous if context else None,
        structured=responses_structured(data),
    )


def parse_messages(
    body: bytes, served_model: Served, max_model_len: int, media_rates: tuple[float, float] = _RATES
) -> GenSpec:
    """Validate a ``/v1/messages`` body: ``model``, ``messages``, ``max_tokens`` are
    required (Anthropic's schema); ``system`` (text or text blocks) counts as prompt, and
    ``image`` blocks as their pixels' tokens; ``tools``, ``tool_choice`` and
    ``output_config.format`` are read.
    vLLM's Messages request has no ``ignore_eos`` (nor ``min_tokens``): it is ignored."""
    try:
        data = load_json(body, tgi=False)
        for key in ("model", "messages", "max_tokens"):
            if key not in data:
                raise anthropic_error(400, f"{key}: Field required")
        model = check_model(data, served_model)
        tokens = message_tokens_of(data["messages"], *media_rates)
        structured = messages_structured(data, anthropic_error)
        system = data.get("system")
        if isinstance(system, str):
            tokens = system.split() + tokens
        elif isinstance(system, list):
            tokens = message_tokens_of([{"role": "system", "content": system}]) + tokens
        max_tokens = _limit(len(tokens), data["max_tokens"], max_model_len, anthropic_error)
    except HttpError as exc:
        if exc.body.startswith(b'{"type":"error"'):
            raise
        message = orjson.loads(exc.body).get("error", {}).get("message", "bad request")
        raise anthropic_error(exc.status, message) from None
    return GenSpec(
        api=API_MESSAGES,
        stream=bool(data.get("stream", False)),
        model=model,
        prompt_tokens=len(tokens),
        max_tokens=max_tokens,
        include_usage=True,  # vLLM's /v1/messages has no ignore_eos: lengths are natural
        tokens=tokens,
        structured=structured,
    )
