"""A commented scenario file tuned to what a :class:`~loadgen.target.probe.Probe` found.

:func:`starter_text` writes the scenario ``loadgen init`` saves: the API that
answered (the first of :data:`~loadgen.target.probe.PREFERRED`), the model
the probes named, the lengths of a run without a file
(:mod:`loadgen.scenario.defaults`: 512-token prompts, 128-token answers, 1, 4,
16 and 64 users, 100 requests a step) cut to fit the context length when it
is shorter, ``ignore_eos`` where the engine takes it (vLLM, SGLang) so
answers are as long as asked, ``telemetry.server_metrics: target`` when
``/metrics`` answered, and the calibration against ``/tokenize`` said in a
comment. Each choice carries a comment saying why; the SLA is left for the
user, commented. :func:`found_lines` are the lines the file's header and the
command's summary share. :func:`fit_lengths` is the rule for a short context.

The text is checked to load (:func:`loadgen.scenario.parse_scenario`) before
it is handed back.
"""

from __future__ import annotations

import json
import re

from loadgen.scenario import (
    DEFAULT_CONCURRENCY,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    DEFAULT_REQUESTS,
    parse_scenario,
    safe_name,
)
from loadgen.target.probe import METRICS_NAMES, Probe
from loadgen.vocab import POOLING_APIS

__all__ = ["CONTEXT_MARGIN", "fit_lengths", "found_lines", "starter_text"]

#: tokens left free of a short context beyond prompt + answer (the chat template's own)
CONTEXT_MARGIN = 16
#: engines whose OpenAI routes take ``ignore_eos`` (answers as long as max_tokens)
IGNORE_EOS_ENGINES = frozenset({"vllm", "sglang"})
IGNORE_EOS_APIS = frozenset({"openai-chat", "openai-completions", "openai-responses"})

#: engine ids as people write them
ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI", "llama.cpp": "llama.cpp"}

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./:@+-]*")
_YAML_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"})


def fit_lengths(max_model_len: int | None) -> tuple[int, int]:
    """(prompt, answer) tokens: the defaults, or a context too short for them cut to fit.

    Too short: the answer is a quarter of the context (at most the default) and
    the prompt what is left, less :data:`CONTEXT_MARGIN` (an eighth of a context
    under 128 tokens).
    """
    prompt, output = DEFAULT_PROMPT_TOKENS, DEFAULT_OUTPUT_TOKENS
    if max_model_len is None or prompt + output + CONTEXT_MARGIN <= max_model_len:
        return prompt, output
    margin = min(CONTEXT_MARGIN, max_model_len // 8)
    output = max(1, min(output, max_model_len // 4))
    return max(1, max_model_len - output - margin), output


def _q(text: str) -> str:
    """``text`` as a YAML scalar: plain where that reads back the same, else quoted."""
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text)


def _label(engine: str) -> str:
    return ENGINE_LABELS.get(engine, engine)


def found_lines(p: Probe) -> list[str]:
    """What the server said, a line a topic (no secrets: the probe holds none)."""
    engine = "not recognised (no version endpoint loadgen knows answered)"
    if p.engine is not None and p.engine_from == METRICS_NAMES:
        engine = f"{_label(p.engine)}, by its /metrics names (no version endpoint answered)"
    elif p.engine is not None:
        version = f" {p.version}" if p.version else " (version not said)"
        engine = f"{_label(p.engine)}{version}, from {p.engine_from}"
    models = "not listed (GET /v1/models gave no list)"
    if p.models is not None:
        shown = ", ".join(p.models[:8]) + (
            f" and {len(p.models) - 8} more" if len(p.models) > 8 else ""
        )
        models = shown or "none"
    context = f"{p.max_model_len} tokens ({p.max_model_len_from})" if p.max_model_len else "unknown"
    served = ", ".join(p.served) or "none"
    others = "; ".join(f"{a.api} {a.says()}" for a in p.apis if not a.served) or "none"
    tok = "no endpoint loadgen knows answered (prompt lengths: the word approximation)"
    if p.tokenize is not None:
        tok = f"{_label(p.tokenize.engine)} dialect of {p.tokenize.endpoint}" + (
            ", chat template counted" if p.tokenize.chat_template else ""
        )
    metrics = "not served"
    if p.metrics:
        metrics = "Prometheus text" + (
            f" with {_label(p.metrics_engine)}'s names"
            if p.metrics_engine
            else ", names not recognised"
        )
    return [
        f"engine: {engine}",
        f"models: {models}",
        f"context length: {context}",
        f"APIs served: {served}",
        f"not served or refused: {others}",
        f"tokenize: {tok}",
        f"metrics: {metrics}",
    ]


def starter_text(
    p: Probe, *, api_key_env: str | None = None, written: str = "", file: str = "THIS-FILE"
) -> str:
    """The scenario file for ``p``, checked to load; ``written`` (when) and ``file`` (its
    path) are for the header's lines."""
    api = p.best_api or "openai-chat"
    pooling = api in POOLING_APIS
    prompt, output = fit_lengths(p.max_model_len)
    lines = [
        f"# Written by `loadgen init {p.url}`{f' on {written}' if written else ''}.",
        "# What the server said:",
        *(f"#   {line}" for line in found_lines(p)),
        "#",
        f"#   loadgen workload {file}    # what it would send, without sending",
        f"#   loadgen run {file}    # the sweep; flags override fields (--rate 2,4,8 ...)",
        "# Every field: docs/scenario.md.",
        f"name: {_q(safe_name(p.model or p.url.split('//', 1)[-1]))}",
        "target:",
        f"  url: {_q(p.url)}",
        *_api_lines(p, api),
        *_model_lines(p),
    ]
    if api_key_env:
        lines.append(
            f"  api_key_env: {_q(api_key_env)}    # the key is read from it, never written"
        )
    elif p.wants_key:
        lines.append("  # api_key_env: MY_KEY_VAR    # the server asked for a key (401/403)")
    if p.engine in IGNORE_EOS_ENGINES and api in IGNORE_EOS_APIS:
        lines.append(
            f"  extra_body: {{ignore_eos: true}}    # {_label(p.engine)}: answers run to "
            "max_tokens, not to the model's EOS"
        )
    lines += ["workload:", "  seed: 0", *_length_lines(p, prompt, output, pooling)]
    lines += _load_lines(pooling)
    lines += _telemetry_lines(p)
    text = "\n".join(lines) + "\n"
    parse_scenario(text, "loadgen init")  # a file init writes always loads
    return text


def _api_lines(p: Probe, api: str) -> list[str]:
    others = [a for a in p.served if a != api]
    if p.best_api is None:
        why = "no API answered its probe: set the one the server speaks"
    else:
        why = "it answered" + (f"; also served: {', '.join(others)}" if others else "")
    return [f"  api: {api}    # {why}"]


def _model_lines(p: Probe) -> list[str]:
    if p.model is None:
        return ["  model: auto    # the server listed no model: name it here"]
    if p.models is not None and p.model in p.models and len(p.models) == 1:
        why = "the only model listed (`auto` takes it too)"
    elif p.models is not None and p.model in p.models:
        why = f"the first of {len(p.models)} listed: pick one (or list a mix in target.models)"
    else:
        why = "as given to init"
    return [f"  model: {_q(p.model)}    # {why}"]


def _length_lines(p: Probe, prompt: int, output: int, pooling: bool) -> list[str]:
    fit = ""
    if p.max_model_len is not None:
        fit = f"; prompt + answer within the context ({p.max_model_len})"
    out = [f"  prompt_tokens: {{dist: fixed, value: {prompt}}}    # tokens a prompt{fit}"]
    if not pooling:
        out.append(
            f"  output_tokens: {{dist: fixed, value: {output}}}    # max_tokens of each request"
        )
    if p.tokenize is not None:
        out.append(
            f"  calibrate: true    # words per token measured with {p.tokenize.endpoint} "
            "before the first step"
        )
    else:
        out.append(
            "  # tokenizer: PATH    # no /tokenize answered: prompts are common words, about as "
            "long as asked; a tokenizer.json makes them exact"
        )
    return out


def _load_lines(pooling: bool) -> list[str]:
    users = ", ".join(str(c) for c in DEFAULT_CONCURRENCY)
    return [
        "load:",
        "  mode: concurrency    # closed loop: each user sends its next request when one ends",
        f"  concurrency: [{users}]    # one step per number of users",
        f"  requests_per_step: {DEFAULT_REQUESTS}    # measured requests a step",
        "  # an open loop instead: mode: rate, rate: [1, 2, 4, 8] (requests/s)",
        "# sla:    # the bounds each step is judged by (ms): uncomment, set yours, --fail-on-sla",
        *(["#   ttft_ms: {p90: 2000}", "#   tpot_ms: {p90: 100}"] if not pooling else []),
        "#   e2e_ms: {p90: 30000}",
        "#   max_error_rate: 0.01",
    ]


def _telemetry_lines(p: Probe) -> list[str]:
    if not p.metrics:
        return ["# telemetry: {server_metrics: URL}    # the server has no /metrics at its URL"]
    names = f" ({_label(p.metrics_engine)}'s names)" if p.metrics_engine else ""
    return [
        "telemetry:",
        f"  server_metrics: target    # <url>/metrics{names}: running, waiting, KV use per step",
    ]
