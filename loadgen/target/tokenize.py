"""Words per token, measured once with the server's ``/tokenize`` (vLLM's).

Without a tokenizer loadgen writes prompts of common words. A word is not
always one token, and the server adds its own tokens (BOS, the chat
template). Two prompts of known word counts, counted by the server, give both:
tokens = overhead + per_word x words. Servers without ``/tokenize`` (or that
refuse it) leave the word approximation in place. Each answer is bounded in
size and time (:data:`loadgen.control.TOKENIZE`); one cut off at its bound is
a warning naming the URL and the bound, and the word approximation stays.

:func:`calibrate_prompts` decides whether a scenario needs it at all.

Imports: numpy, loadgen.client.transport (TLS), loadgen.control, loadgen.redact,
loadgen.scenario, loadgen.target.options, loadgen.workload.prompts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loadgen.client.transport import TlsOptions
from loadgen.control import TOKENIZE, ControlError, fetch
from loadgen.redact import warn
from loadgen.scenario.models import Scenario
from loadgen.target.options import target_headers, tls_options
from loadgen.workload.prompts import Calibration, make_prompt

__all__ = ["calibrate", "calibrate_prompts"]

#: Word counts of the two calibration prompts.
SHORT_WORDS, LONG_WORDS = 16, 528


def calibrate(
    url: str, model: str, chat: bool, headers: dict[str, str], tls: TlsOptions
) -> Calibration | None:
    """The server's count of two prompts, as a line; None when it cannot tell us."""
    rng = np.random.default_rng([0, 7])
    texts = [make_prompt(SHORT_WORDS, rng), make_prompt(LONG_WORDS, rng)]
    counts = []
    where, verify = url.rstrip("/") + "/tokenize", tls.context()
    try:
        for text in texts:
            body: dict[str, Any] = {"model": model}
            if chat:
                body["messages"] = [{"role": "user", "content": text}]
            else:
                body["prompt"] = text
            reply = fetch("POST", where, TOKENIZE, headers=headers, verify=verify, json=body)
            if reply.status != 200:
                return None
            count = reply.json().get("count")
            if not isinstance(count, int) or count <= 0:
                return None
            counts.append(count)
    except ControlError as exc:
        if exc.limit_hit:  # a server without /tokenize says nothing; one cut off is told
            warn(f"warning: {exc}; prompt lengths stay the word approximation")
        return None
    except (ValueError, AttributeError):
        return None
    per_word = (counts[1] - counts[0]) / (LONG_WORDS - SHORT_WORDS)
    if per_word <= 0:
        return None
    return Calibration(per_word=per_word, overhead=counts[0] - per_word * SHORT_WORDS)


def calibrate_prompts(sc: Scenario, url: str) -> Calibration | None:
    """Words per token from the server's /tokenize, when no tokenizer makes prompts exact."""
    w = sc.workload
    exact = w.tokenizer is not None or w.prompt_as == "token_ids"
    if exact or not w.calibrate or not sc.target.api.startswith("openai"):
        return None
    return calibrate(url, sc.target.model, sc.target.chat, target_headers(sc), tls_options(sc))
