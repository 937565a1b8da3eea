"""Request bodies -> ``GenSpec``: what one generation request asks for.

Owns validation of OpenAI completions/chat and TGI generate bodies, prompt
token counting (one token per whitespace-separated word of text, one per int of
a token list) and the limits the real servers enforce. Errors come out as
``HttpError`` in the shape of the server being imitated (vLLM answers 400,
TGI answers 422). Imports only the standard library, orjson and ``wire``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from loadgen.mock.wire import tgi_error, vllm_error

__all__ = ["API_CHAT", "API_COMPLETIONS", "API_TGI", "GenSpec", "parse_openai", "parse_tgi"]

API_CHAT = "chat"
API_COMPLETIONS = "completions"
API_TGI = "tgi"
TGI_DEFAULT_MAX_NEW_TOKENS = 100


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


def _load(body: bytes, tgi: bool) -> dict[str, Any]:
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


def _count_prompt(prompt: Any) -> int:
    if isinstance(prompt, str):
        return len(prompt.split())
    if isinstance(prompt, list) and all(
        isinstance(t, int) and not isinstance(t, bool) for t in prompt
    ):
        return len(prompt)
    if isinstance(prompt, list) and len(prompt) == 1:
        return _count_prompt(prompt[0])
    msg = "prompt must be a string or a list of token ids (loadgen-mock serves one prompt)"
    raise vllm_error(400, msg, "prompt")


def _count_messages(messages: Any) -> int:
    if not isinstance(messages, list) or not messages:
        raise vllm_error(400, "messages must be a non-empty list", "messages")
    total = 0
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise vllm_error(400, "each message needs a role", "messages")
        content = message.get("content")
        if isinstance(content, str):
            total += len(content.split())
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    total += len(part["text"].split())
        elif content is not None:
            raise vllm_error(400, "message content must be a string or a list", "messages")
    return total


def parse_openai(body: bytes, api: str, served_model: str | None, max_model_len: int) -> GenSpec:
    """Validate a vLLM completions (``api="completions"``) or chat body."""
    data = _load(body, tgi=False)
    model = data.get("model")
    if model is None:
        model = served_model or "loadgen-mock"
    if not isinstance(model, str):
        raise vllm_error(400, "model must be a string", "model")
    if served_model is not None and model != served_model:
        raise vllm_error(404, f"The model `{model}` does not exist.", "model")
    if api == API_CHAT:
        prompt_tokens = _count_messages(data.get("messages"))
        max_tokens = _int(data, "max_completion_tokens", None)
        if max_tokens is None:
            max_tokens = _int(data, "max_tokens", None)
    else:
        if "prompt" not in data:
            raise vllm_error(400, "prompt is required", "prompt")
        prompt_tokens = _count_prompt(data["prompt"])
        max_tokens = _int(data, "max_tokens", 16)
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
    )


def parse_tgi(body: bytes, stream: bool, served_model: str | None, max_model_len: int) -> GenSpec:
    """Validate a TGI ``/generate`` or ``/generate_stream`` body."""
    data = _load(body, tgi=True)
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
    prompt_tokens = len(inputs.split())
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
        model=served_model or "loadgen-mock",
        prompt_tokens=prompt_tokens,
        max_tokens=max_new,
        ignore_eos=bool(params.get("ignore_eos", False)),
        details=bool(params.get("details", False)),
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
    )
