"""Words per token, measured once with the server's own tokenize endpoint.

Without a tokenizer loadgen writes prompts of common words. A word is not
always one token, and the server adds its own tokens (BOS, the chat
template). Two prompts of known word counts, counted by the server, give both:
tokens = overhead + per_word x words.

Each engine has its own dialect (:data:`DIALECTS`); they are tried in an
order that suits ``target.api`` (TGI's first for ``api: tgi``), and the first
that counts both prompts is the one the summary names:

- ``vllm``: ``POST /tokenize`` ``{"model", "messages"}`` (chat: the chat
  template is applied) or ``{"model", "prompt"}`` -> ``{"count": N, ...}``.
  SGLang's ``/tokenize`` answers the prompt form the same way (no messages:
  for chat the template's tokens are then not counted).
- ``llama.cpp``: llama-server's ``POST /tokenize`` ``{"content", "add_special":
  true}`` -> ``{"tokens": [...]}``; for chat the text is first put through
  ``POST /apply-template`` ``{"messages"}`` -> ``{"prompt": text}``.
- ``tgi``: TGI's ``POST /tokenize`` ``{"inputs"}`` -> ``[{"id", "text",
  "start", "stop"}, ...]``.

An answer of another shape (a 404, a 422, llama.cpp's empty ``tokens`` for a
body without ``content``) moves on to the next dialect; servers that answer
none leave the word approximation in place. Each answer is bounded in size and
time (:data:`loadgen.control.TOKENIZE`); one cut off at its bound is a warning
naming the URL and the bound, and ends the calibration (the approximation
stays); a refused connection ends it silently.

:func:`calibrate_prompts` decides whether a scenario needs it at all.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from loadgen.client import TlsOptions
from loadgen.control import TOKENIZE, ControlError, fetch
from loadgen.redact import warn
from loadgen.scenario import Scenario
from loadgen.target.options import target_headers, tls_options
from loadgen.workload import Calibration, make_prompt

__all__ = ["DIALECTS", "calibrate", "calibrate_prompts", "dialect_order"]

#: Word counts of the two calibration prompts.
SHORT_WORDS, LONG_WORDS = 16, 528


class _Unknown(Exception):
    """This dialect is not the server's: try the next."""


@dataclass(slots=True, frozen=True)
class _Asker:
    base: str
    model: str
    headers: dict[str, str]
    verify: ssl.SSLContext | bool

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """The JSON answer of a 200; :class:`_Unknown` for another status or no JSON."""
        reply = fetch(
            "POST", self.base + path, TOKENIZE, headers=self.headers, verify=self.verify, json=body
        )
        if reply.status != 200:
            raise _Unknown
        try:
            return reply.json()
        except ValueError:
            raise _Unknown from None


#: a dialect counts one text: (asker, text, chat) -> (tokens, the chat template counted)
Counter = Callable[[_Asker, str, bool], tuple[int, bool]]


def _positive(n: object) -> int:
    if type(n) is not int or n <= 0:
        raise _Unknown
    return n


def _vllm(ask: _Asker, text: str, chat: bool) -> tuple[int, bool]:
    if chat:  # the chat template applied, as the chat route applies it
        try:
            got = ask.post("/tokenize", {"model": ask.model, "messages": _user(text)})
            return _positive(got.get("count") if isinstance(got, dict) else None), True
        except _Unknown:
            pass  # SGLang: a prompt only
    got = ask.post("/tokenize", {"model": ask.model, "prompt": text})
    return _positive(got.get("count") if isinstance(got, dict) else None), False


def _llama_cpp(ask: _Asker, text: str, chat: bool) -> tuple[int, bool]:
    templated = False
    if chat:
        try:
            got = ask.post("/apply-template", {"messages": _user(text)})
            if isinstance(got, dict) and isinstance(got.get("prompt"), str) and got["prompt"]:
                text, templated = got["prompt"], True
        except _Unknown:
            pass  # an older llama-server: the text alone
    got = ask.post("/tokenize", {"content": text, "add_special": True})
    tokens = got.get("tokens") if isinstance(got, dict) else None
    if not isinstance(tokens, list):
        raise _Unknown
    return _positive(len(tokens)), templated


def _tgi(ask: _Asker, text: str, chat: bool) -> tuple[int, bool]:
    got = ask.post("/tokenize", {"inputs": text})
    if not isinstance(got, list) or not all(isinstance(t, dict) and "id" in t for t in got):
        raise _Unknown
    return _positive(len(got)), False


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


#: engine -> (how it counts a text, the endpoint the summary names)
DIALECTS: dict[str, tuple[Counter, str]] = {
    "vllm": (_vllm, "POST /tokenize"),
    "llama.cpp": (_llama_cpp, "POST /tokenize"),
    "tgi": (_tgi, "POST /tokenize"),
}


def dialect_order(api: str) -> tuple[str, ...]:
    """The dialects to try for ``target.api``: the API's own engine first."""
    if api == "tgi":
        return ("tgi", "vllm", "llama.cpp")
    return ("vllm", "llama.cpp", "tgi")


def calibrate(
    url: str,
    model: str,
    chat: bool,
    headers: dict[str, str],
    tls: TlsOptions,
    *,
    api: str = "openai-chat",
) -> Calibration | None:
    """The server's count of two prompts, as a line; None when it cannot tell us."""
    rng = np.random.default_rng([0, 7])
    texts = [make_prompt(SHORT_WORDS, rng), make_prompt(LONG_WORDS, rng)]
    ask = _Asker(url.rstrip("/"), model, headers, tls.context())
    for engine in dialect_order(api):
        count, endpoint = DIALECTS[engine]
        try:
            (short, templated), (long, _) = (count(ask, t, chat) for t in texts)
        except _Unknown:
            continue
        except ControlError as exc:
            if exc.limit_hit:  # a server without /tokenize says nothing; one cut off is told
                warn(f"warning: {exc}; prompt lengths stay the word approximation")
            return None
        per_word = (long - short) / (LONG_WORDS - SHORT_WORDS)
        if per_word <= 0:
            continue
        if templated and engine == "llama.cpp":
            endpoint += " (after POST /apply-template)"
        return Calibration(
            per_word=per_word,
            overhead=short - per_word * SHORT_WORDS,
            engine=engine,
            endpoint=endpoint,
            chat_template=templated,
        )
    return None


def calibrate_prompts(sc: Scenario, url: str) -> Calibration | None:
    """Words per token from the server's tokenize endpoint, when no tokenizer makes
    prompts exact."""
    w = sc.workload
    exact = w.tokenizer is not None or w.prompt_as == "token_ids"
    if exact or not w.calibrate:
        return None
    t = sc.target
    return calibrate(
        url,
        t.model,
        t.chat,
        target_headers(sc),
        tls_options(sc),
        api=t.api,
    )
