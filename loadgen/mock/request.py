"""Request bodies -> ``GenSpec``: what one generation request asks for.

Owns validation of OpenAI completions/chat and TGI generate bodies, the prompt's
tokens (one per whitespace-separated word of text, one per int of a token list;
their number is the prompt token count, their blocks what the prefix cache
sees) and the limits the real servers enforce. Errors come out as
``HttpError`` in the shape of the server being imitated (vLLM answers 400,
TGI answers 422). An agent's tool calls and results in a prompt count as
:mod:`loadgen.mock.tool_rounds` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from loadgen.mock.http_framing import tgi_error, vllm_error
from loadgen.mock.media import (
    DEFAULT_AUDIO_TOKENS_PER_S,
    DEFAULT_IMAGE_TOKENS_PER_MP,
    media_tokens,
)
from loadgen.mock.structured import Structured, parse_structured
from loadgen.mock.tool_rounds import message_tool_words, part_tool_words

__all__ = [
    "API_CHAT",
    "API_COMPLETIONS",
    "API_TGI",
    "GenSpec",
    "Served",
    "Tokens",
    "check_model",
    "load_json",
    "message_tokens_of",
    "parse_openai",
    "parse_tgi",
    "prompt_tokens_of",
    "served_name",
]

API_CHAT = "chat"
API_COMPLETIONS = "completions"
API_TGI = "tgi"
TGI_DEFAULT_MAX_NEW_TOKENS = 100

Tokens = list[str] | list[int]  # the words of a text prompt, or its token ids


@dataclass(slots=True)
class GenSpec:
    """One generation request, validated."""

    api: str
    stream: bool
    model: str
    prompt_tokens: int
    max_tokens: int
    ignore_eos: bool = False
    min_tokens: int = 0
    include_usage: bool = False
    continuous_usage: bool = False
    details: bool = False
    seed: int | None = None
    tokens: Tokens = field(default_factory=list)
    # -- tool calls and structured output (chat): tools, tool_choice, response_format
    structured: Structured | None = None
    # -- Responses API (loadgen.mock.request_apis)
    store: bool = False  # keep the answer for a later previous_response_id
    context_tokens: int = 0  # of prompt_tokens, those of the previous_response_id conversation
    previous_id: str | None = None  # the previous_response_id it continues


def load_json(body: bytes, tgi: bool) -> dict[str, Any]:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if tgi:
            msg = f"Failed to parse the request body as JSON: {exc}"
            raise tgi_error(422, msg, "validation") from None
        raise vllm_error(400, f"JSON decode error: {exc}") from None
    if not isinstance(data, dict):
        if tgi:
            raise tgi_error(422, "request body must be a JSON object", "validation")
        raise vllm_error(400, "request body must be a JSON object")
    return data


def _int(data: dict[str, Any], key: str, default: int | None) -> int | None:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise vllm_error(400, f"{key} must be an integer, got {value!r}", key)
    return value


def prompt_tokens_of(prompt: Any) -> Tokens:
    """The tokens of a completions ``prompt``: its words, or the token ids as given."""
    if isinstance(prompt, str):
        return prompt.split()
    if isinstance(prompt, list) and all(
        isinstance(t, int) and not isinstance(t, bool) for t in prompt
    ):
        return prompt
    if isinstance(prompt, list) and len(prompt) == 1:
        return prompt_tokens_of(prompt[0])
    msg = "prompt must be a string or a list of token ids (loadgen-mock serves one prompt)"
    raise vllm_error(400, msg, "prompt")


def message_tokens_of(
    messages: Any,
    image_tokens_per_mp: float = DEFAULT_IMAGE_TOKENS_PER_MP,
    audio_tokens_per_s: float = DEFAULT_AUDIO_TOKENS_PER_S,
) -> list[str]:
    """The tokens of chat ``messages``: the words of every content (and text part), in order,
    each ``image_url`` / ``input_audio`` part's tokens (:mod:`loadgen.mock.media`), and
    the words of tool calls and results (:mod:`loadgen.mock.tool_rounds`).

    Role names and the chat template count nothing.
    """
    if not isinstance(messages, list) or not messages:
        raise vllm_error(400, "messages must be a non-empty list", "messages")
    words: list[str] = []
    media = 0
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise vllm_error(400, "each message needs a role", "messages")
        content = message.get("content")
        if isinstance(content, str):
            words += content.split()
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, dict):
                    continue
                if isinstance(part.get("text"), str):
                    words += part["text"].split()
                elif (tool := part_tool_words(part)) is not None:
                    words += tool
                elif (
                    m := media_tokens(part, media, image_tokens_per_mp, audio_tokens_per_s)
                ) is not None:
                    words += m
                    media += 1
        elif content is not None:
            raise vllm_error(400, "message content must be a string or a list", "messages")
        if len(message) > 2:  # an agent's tool round: the calls and results (tool_rounds)
            words += message_tool_words(message)
    return words


#: what the mock serves: None (any name), one model, or a model and its LoRA adapters
Served = str | tuple[str, ...] | None


def served_name(served: Served) -> str:
    """The name answers carry when a request names none: the (base) model's."""
    if isinstance(served, tuple):
        return served[0]
    return served or "loadgen-mock"


def check_model(data: dict[str, Any], served_model: Served) -> str:
    """The body's model name (the served one when absent); vLLM's 404 for another name.

    ``served_model`` a tuple: the base model and its LoRA adapters (``--lora``), any of them.
    """
    model = data.get("model")
    if model is None:
        model = served_name(served_model)
    if not isinstance(model, str):
        raise vllm_error(400, "model must be a string", "model")
    names = (served_model,) if isinstance(served_model, str) else served_model
    if names is not None and model not in names:
        raise vllm_error(404, f"The model `{model}` does not exist.", "model")
    return model


def parse_openai(
    body: bytes,
    api: str,
    served_model: Served,
    max_model_len: int,
    media_rates: tuple[float, float] = (DEFAULT_IMAGE_TOKENS_PER_MP, DEFAULT_AUDIO_TOKENS_PER_S),
) -> GenSpec:
    """Validate a vLLM completions (``api="completions"``) or chat body; ``media_rates``:
    prompt tokens per megapixel of an image and per second of audio in chat messages."""
    data = load_json(body, tgi=False)
    model = check_model(data, served_model)
    tokens: Tokens
    if api == API_CHAT:
        tokens = message_tokens_of(data.get("messages"), *media_rates)
        max_tokens = _int(data, "max_completion_tokens", None)
        if max_tokens is None:
            max_tokens = _int(data, "max_tokens", None)
    else:
        if "prompt" not in data:
            raise vllm_error(400, "prompt is required", "prompt")
        tokens = prompt_tokens_of(data["prompt"])
        max_tokens = _int(data, "max_tokens", 16)
    prompt_tokens = len(tokens)
    if _int(data, "n", 1) != 1:
        raise vllm_error(400, "loadgen-mock serves n=1 only", "n")
    room = max_model_len - prompt_tokens
    if max_tokens is None:
        max_tokens = room
    if max_tokens < 1:
        raise vllm_error(400, f"max_tokens must be at least 1, got {max_tokens}.", "max_tokens")
    if prompt_tokens + max_tokens > max_model_len:
        msg = (
            f"This model's maximum context length is {max_model_len} tokens. However, you "
            f"requested {prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, "
            f"{max_tokens} in the completion). Please reduce the length of the messages or "
            "completion."
        )
        raise vllm_error(400, msg, "max_tokens")
    min_tokens = _int(data, "min_tokens", 0) or 0
    if min_tokens < 0 or min_tokens > max_tokens:
        raise vllm_error(400, "min_tokens must be in [0, max_tokens]", "min_tokens")
    options = data.get("stream_options") or {}
    if not isinstance(options, dict):
        raise vllm_error(400, "stream_options must be an object", "stream_options")
    stream = bool(data.get("stream", False))
    if options and not stream:
        raise vllm_error(400, "Stream options can only be defined when `stream=True`.")
    return GenSpec(
        api=api,
        stream=stream,
        model=model,
        prompt_tokens=prompt_tokens,
        max_tokens=max_tokens,
        ignore_eos=bool(data.get("ignore_eos", False)),
        min_tokens=min_tokens,
        include_usage=bool(options.get("include_usage", False)),
        continuous_usage=bool(options.get("include_usage", False))
        and bool(options.get("continuous_usage_stats", False)),
        seed=data.get("seed") if isinstance(data.get("seed"), int) else None,
        tokens=tokens,
        structured=parse_structured(data) if api == API_CHAT else None,
    )


def parse_tgi(body: bytes, stream: bool, served_model: Served, max_model_len: int) -> GenSpec:
    """Validate a TGI ``/generate`` or ``/generate_stream`` body.

    Output-length controls come from ``parameters``: ``max_new_tokens`` (TGI's),
    and the mock's extensions ``ignore_eos`` and ``min_tokens``, read as the
    OpenAI routes read them. Top-level keys other than ``inputs`` and
    ``parameters`` are ignored, as TGI ignores them.
    """
    data = load_json(body, tgi=True)
    inputs = data.get("inputs")
    if not isinstance(inputs, str):
        raise tgi_error(422, "`inputs` must be a string", "validation")
    params = data.get("parameters") or {}
    if not isinstance(params, dict):
        raise tgi_error(422, "`parameters` must be an object", "validation")
    max_new = params.get("max_new_tokens", TGI_DEFAULT_MAX_NEW_TOKENS)
    if max_new is None:
        max_new = TGI_DEFAULT_MAX_NEW_TOKENS
    if isinstance(max_new, bool) or not isinstance(max_new, int) or max_new < 1:
        raise tgi_error(422, "`max_new_tokens` must be strictly positive", "validation")
    min_tokens = params.get("min_tokens", 0)
    if min_tokens is None:
        min_tokens = 0
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, int):
        raise tgi_error(422, "`min_tokens` must be an integer", "validation")
    if not 0 <= min_tokens <= max_new:
        raise tgi_error(422, "`min_tokens` must be in [0, max_new_tokens]", "validation")
    tokens = inputs.split()
    prompt_tokens = len(tokens)
    if prompt_tokens + max_new > max_model_len:
        msg = (
            f"`inputs` tokens + `max_new_tokens` must be <= {max_model_len}. Given: "
            f"{prompt_tokens} `inputs` tokens and {max_new} `max_new_tokens`"
        )
        raise tgi_error(422, msg, "validation")
    seed = params.get("seed")
    return GenSpec(
        api=API_TGI,
        stream=stream,
        model=served_name(served_model),
        prompt_tokens=prompt_tokens,
        max_tokens=max_new,
        ignore_eos=bool(params.get("ignore_eos", False)),
        min_tokens=min_tokens,
        details=bool(params.get("details", False)),
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        tokens=tokens,
    )
