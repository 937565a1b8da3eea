"""``POST /tokenize`` as vLLM serves it, with the mock's own tokenizer.

Owns the answer to vLLM's ``TokenizeCompletionRequest`` (``prompt``) and
``TokenizeChatRequest`` (``messages``): ``{"count", "max_model_len", "tokens",
"token_strs"}``, fields in vLLM's ``TokenizeResponse`` order. The tokens are
those the generation routes count (words of the prompt, or of every message
content), so ``count`` equals ``usage.prompt_tokens`` of the same prompt. A
word's id is a stable hash of it below ``VOCAB_SIZE``.
"""

from __future__ import annotations

import zlib

import orjson

from loadgen.mock.http_framing import vllm_error
from loadgen.mock.request import Served, check_model, load_json, message_tokens_of

__all__ = ["VOCAB_SIZE", "tokenize", "word_id"]

VOCAB_SIZE = 32_000


def word_id(word: str) -> int:
    """The mock's token id of a word: the same in every process and run."""
    return zlib.crc32(word.encode()) % VOCAB_SIZE


def tokenize(body: bytes, served_model: Served, max_model_len: int) -> bytes:
    """The JSON answer of ``/tokenize``; ``HttpError`` (vLLM's 400/404) for a bad body."""
    data = load_json(body, tgi=False)
    check_model(data, served_model)
    if "messages" in data:
        words = message_tokens_of(data["messages"])
    elif isinstance(data.get("prompt"), str):
        words = data["prompt"].split()
    else:
        raise vllm_error(400, "expected a string `prompt` or a list of `messages`", "prompt")
    strs = words if data.get("return_token_strs") is True else None
    return orjson.dumps({
        "count": len(words), "max_model_len": max_model_len,
        "tokens": [word_id(w) for w in words], "token_strs": strs,
    })  # fmt: skip
