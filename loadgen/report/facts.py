"""The words for run and step figures that several outputs print the same way.

Owns the wording of: where the prompt lengths come from, the workload's
description, the prompt-length check, short outputs, the prefix-cache hit
rate, where the time went (the server's histograms), the ramp-up count and the
step's own warnings. The console, report.md
and report.html all take their lines from here, so they say the same thing.
Each function returns nothing (None, an empty list) when its figure carries
no information, so a plain run shows none of these lines.
"""

from __future__ import annotations

from typing import Any

from loadgen.report.mix import mix_text
from loadgen.summary import (
    NEW_SHARE_NOTE,
    PART_WORDS,
    PHASES,
    PromptCalibration,
    StepSummary,
    Summary,
    WorkloadAgent,
    WorkloadInfo,
)

__all__ = [
    "SOURCE_TEXT",
    "cached_text",
    "calibration_text",
    "media_text",
    "phases_text",
    "prefix_cache_text",
    "prompt_length_text",
    "ramp_text",
    "run_facts",
    "short_output_warning",
    "source_text",
    "spec_decode_text",
    "spec_mismatch_text",
    "step_warnings",
    "time_split_text",
    "ttft_of_text",
    "workload_lines",
]

#: ``Summary.prompt_length_source`` -> what it means for the requested prompt lengths.
SOURCE_TEXT = {
    "tokenizer": "counted with the model's tokenizer: exact",
    "server": "words per token measured with the server's /tokenize",
    "approximate": "a words-per-token guess: no tokenizer, no calibration",
    "token_ids": "the prompts are token ids: exact",
    "dataset": "a dataset's text, not counted: no tokenizer",
}
#: Workload keys shown by a line of their own, in this order; the prefix and sessions follow.
_WORKLOAD_KEYS = (
    "dataset",
    "trace",
    "prompt_tokens",
    "output_tokens",
    "tokenizer",
    *("batch", "documents", "query_tokens"),  # pooling APIs (embeddings, rerank)
    *("images", "audio"),  # inputs beyond text
    "cancel",  # users who stop (workload.cancel)
)


def source_text(source: str) -> str:
    """``tokenizer`` -> ``tokenizer (counted with the model's tokenizer: exact)``."""
    meaning = SOURCE_TEXT.get(source)
    return f"{source} ({meaning})" if meaning else source


def _value(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} {_value(x)}" for k, x in v.items() if x is not None)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def workload_lines(w: WorkloadInfo | None) -> list[str]:
    """The runner's workload description as short ``what: how`` lines."""
    if w is None:
        return []
    out: list[str] = []
    if w.dataset is not None:
        count = f" ({w.dataset_rows:,} rows)" if w.dataset_rows is not None else ""
        out.append(f"dataset: {w.dataset}{count}")
    out += [
        f"{key.replace('_', ' ')}: {_value(value)}"
        for key in _WORKLOAD_KEYS[1:]
        if (value := getattr(w, key)) is not None
    ]
    if (prefix := w.prefix) is not None:
        size = (
            f"{prefix.tokens} tokens"
            if prefix.tokens is not None
            else f"{100 * prefix.share:g}% of each prompt"
            if prefix.share is not None
            else "?"
        )
        groups = "1 group" if prefix.groups == 1 else f"{prefix.groups} groups"
        out.append(f"shared prefix: {size}, {groups}")
    if (agent := w.agent) is not None:
        out.append(_agent_line(agent))
    if (sessions := w.sessions) is not None:
        think = sessions.think_time_s
        out.append(
            f"sessions: turns {_value(sessions.turns)}"
            + (f", think time {_value(think)}" if think is not None else "")
        )
    return out


def _agent_line(agent: WorkloadAgent) -> str:
    """``agent tasks: calls fixed 6, tool time ..., tool results ...; fan-out ...``."""
    parts = [f"calls {agent.calls}"]
    if agent.tool_time_s is not None:
        parts.append(f"tool time {agent.tool_time_s}")
    parts.append(f"tool results {agent.tool_result_tokens} tokens")
    if agent.max_context_tokens is not None:
        parts.append(f"context at most {agent.max_context_tokens:,} tokens")
    fan = f"; fan-out {agent.fan_out}" if agent.fan_out is not None else ""
    return "agent tasks: " + ", ".join(parts) + fan


def run_facts(summary: Summary) -> list[str]:
    """``prompt lengths: ...`` and the workload's lines.

    Empty for a summary that recorded no workload and the default source: a
    file written before these fields existed, where the source is a guess.
    """
    workers = []
    if summary.workers_clock_uncertainty_ms is not None:
        workers.append(
            f"workers: {summary.workers} Ray actors send the load (saturation judged per "
            f"worker; clocks matched to ±{summary.workers_clock_uncertainty_ms:.3f} ms)"
        )
    elif summary.workers > 1:
        workers.append(
            f"workers: {summary.workers} processes send the load (saturation judged per worker)"
        )
    mixed = [line] if (line := mix_text(summary)) is not None else []
    if summary.workload is None and summary.prompt_length_source == "approximate":
        return [*workers, *mixed]
    return [
        *workers,
        *mixed,
        "prompt lengths: "
        + (calibration_text(summary.calibration) or source_text(summary.prompt_length_source)),
        *workload_lines(summary.workload),
    ]


#: how each engine's name is written (summary.json keeps the plain key)
_ENGINE_NAMES = {"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang"}


def calibration_text(cal: PromptCalibration | None) -> str:
    """``server (llama.cpp's POST /tokenize: 1.310 tokens/word + 2.0, chat template counted)``;
    empty without a calibration."""
    if cal is None:
        return ""
    template = "chat template counted" if cal.chat_template else "chat template not counted"
    engine = _ENGINE_NAMES.get(cal.engine, cal.engine)
    return (
        f"server ({engine}'s {cal.endpoint}: {cal.per_word:.3f} tokens/word "
        f"+ {cal.overhead:.1f}, {template})"
    )


def _pct(v: float) -> str:
    return f"{100 * v:+.1f}%"


def prompt_length_text(step: StepSummary) -> str | None:
    """``prompt tokens: planned vs server +3.1% mean (worst +7.9%), 4 of 40 beyond ±2%``.

    None when no request had a server prompt count.
    """
    c = step.prompt_lengths
    if not c.compared or c.mean_rel_diff is None or c.worst_rel_diff is None:
        return None
    text = (
        f"prompt tokens: planned vs server {_pct(c.mean_rel_diff)} mean "
        f"(worst {_pct(c.worst_rel_diff)})"
    )
    if c.beyond_tolerance:
        limit = f"beyond ±{100 * c.tolerance:g}%" if c.tolerance else "differ"
        text += f", {c.beyond_tolerance} of {c.compared} {limit}"
    return text


def short_output_warning(step: StepSummary) -> str | None:
    """Full outputs were forced (ignore_eos, min_tokens) and some requests still ended short."""
    t = step.tokens
    if not (t.full_output_expected and t.short_outputs):
        return None
    return (
        f"{t.short_outputs} of {step.requests.ok} outputs ended before max_tokens although "
        "the request body forces full outputs"
    )


def step_warnings(step: StepSummary) -> list[str]:
    """The step's own warnings, and the short-output warning when they do not carry one.

    The metrics add a short-output line of their own (it names ``max_tokens``);
    a summary built elsewhere may not, so the report adds its line then.
    """
    out = list(step.warnings)
    short = short_output_warning(step)
    if short is not None and not any("max_tokens" in w for w in out):
        out.append(short)
    return out


def prefix_cache_text(step: StepSummary) -> str | None:
    """``prefix cache hit 62.5% of 12,000 prompt tokens``; None without a hit rate."""
    pc = step.prefix_cache
    if pc is None or pc.hit_rate is None:
        return None
    looked_up = f" of {pc.queries_tokens:,.0f} prompt tokens" if pc.queries_tokens else ""
    return f"prefix cache hit {100 * pc.hit_rate:.1f}%{looked_up}"


def spec_decode_text(step: StepSummary) -> str | None:
    """``speculative decoding: 70.2% of 1,200 draft tokens accepted, mean accepted length
    3.11; 2.85 tokens/event: ITL p50 21.3 ms per event, TPOT p50 7.5 ms per token``; None
    when the server exports no spec-decode counters or drafted nothing in the step."""
    sd = step.spec_decode
    if sd is None or sd.acceptance_rate is None or sd.mean_accepted_length is None:
        return None
    text = (
        f"speculative decoding: {100 * sd.acceptance_rate:.1f}% of {sd.draft_tokens:,.0f} "
        f"draft tokens accepted, mean accepted length {sd.mean_accepted_length:.2f}"
    )
    if sd.tokens_per_event is not None:
        text += f"; {sd.tokens_per_event:.2f} tokens/event"
    itl, tpot = step.itl_ms.p50, step.tpot_ms.p50
    if itl is not None and tpot is not None:
        text += f": ITL p50 {itl:.1f} ms per event, TPOT p50 {tpot:.1f} ms per token"
    return text


def spec_mismatch_text(step: StepSummary) -> str:
    """What explains usage tokens != token events when the server accepted drafts."""
    sd = step.spec_decode
    if sd is None or not sd.accepted_tokens:
        return ""
    return " (speculative decoding: an event carries its step's accepted drafts)"


def time_split_text(step: StepSummary) -> str | None:
    """``where the time went (server, means): queue 38 ms, prefill 61 ms, decode 812 ms,
    server frontend 20 ms, network + client 9 ms; queue grew most: ...``; None without
    the server's split."""
    ts = step.time_split
    if ts is None:
        return None
    means = ts.part_means()
    # round() first: a mean of -0.3 ms reads "0 ms", not "-0 ms"
    parts = [f"{PART_WORDS[part]} {round(means[part]):,} ms" for part in PHASES if part in means]
    if not parts:
        return None
    text = f"where the time went ({ts.engine} histograms, means): " + ", ".join(parts)
    return text + (f"; {ts.grew_most}" if ts.grew_most else "")


def cached_text(step: StepSummary) -> str | None:
    """``cached tokens (usage): 58.1% of prompt tokens, 90% of requests, 595/request; by
    turn 0%, 88%, 93%``: the prefix cache as the server's answers counted it; None when
    no answer counted a cached token (a server that counts them counts 0 on every request
    of a run without shared prefixes: nothing to say)."""
    c = step.cache
    if c is None or not c.cached_tokens:
        return None
    text = (
        f"cached tokens (usage): {100 * c.hit_rate:.1f}% of prompt tokens, "
        f"{100 * c.requests_with_hits:.0f}% of requests, "
        f"{c.cached_tokens_per_request:,.0f}/request"
    )
    if c.session_hit_rate_mean is not None:
        text += f", {100 * c.session_hit_rate_mean:.1f}% a session"
    if c.by_turn:
        rates = ", ".join("-" if r is None else f"{100 * r:.0f}%" for r in c.by_turn)
        text += f"; by {c.by_turn_of or 'turn'} {rates}"
    return text


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def phases_text(step: StepSummary) -> str | None:
    """``connections: 40 new (25%), connect 0.3/1.2 ms, TLS 4.1/9.8 ms (p50/p99); TTFT p50
    from start 95.0 ms new vs 22.0 ms reused``: what a new connection cost beside a
    kept-alive one. None unless new connections carried at least ``NEW_SHARE_NOTE`` of
    the measured requests (a kept-alive run opens one per stream: nothing to say)."""
    p = step.phases
    if p is None or not p.new.requests or p.new_share < NEW_SHARE_NOTE:
        return None
    n = p.new
    text = f"connections: {n.requests} new ({100 * p.new_share:.0f}%)"
    if n.connect_ms_p50 is not None:
        text += f", connect {_ms(n.connect_ms_p50)}/{_ms(n.connect_ms_p99)} ms"
    if n.tls_ms_p50 is not None:
        text += f", TLS {_ms(n.tls_ms_p50)}/{_ms(n.tls_ms_p99)} ms"
    if n.connect_ms_p50 is not None or n.tls_ms_p50 is not None:
        text += " (p50/p99)"
    if step.pooling is not None or n.ttft_ms_p50 is None:  # no token timing (pooling)
        return text
    text += f"; TTFT p50 from start {_ms(n.ttft_ms_p50)} ms new"
    if p.reused.requests:
        text += f" vs {_ms(p.reused.ttft_ms_p50)} ms reused"
    return text


def media_text(step: StepSummary) -> str | None:
    """``inputs: 1.5 images/request, 0.42 MP/s, 3.1 s audio/s, 1.2 MB/request, sent in
    4.1 ms mean, beside 812 prompt tokens/s``; None when no request carried media."""
    m = step.media
    if m is None:
        return None
    parts = []
    if m.images_per_request:
        parts += [f"{m.images_per_request:.2f} images/request", f"{m.megapixels_per_s:.2f} MP/s"]
    if m.audio_s_per_request:
        parts.append(f"{m.audio_s_per_s:.2f} s audio/s")
    parts.append(f"{m.request_bytes_mean / 1e6:.2f} MB/request")
    if step.send_ms is not None and step.send_ms.mean is not None:
        parts.append(f"sent in {step.send_ms.mean:.2f} ms mean")
    tokens = step.throughput.input_tokens_per_s
    return f"inputs: {', '.join(parts)}, beside {tokens:,.0f} prompt tokens/s"


def ramp_text(step: StepSummary) -> str:
    """``, 12 ramp-up`` after the warm-up count, or nothing."""
    return f", {step.requests.ramp} ramp-up" if step.requests.ramp else ""


def cancelled_text(step: StepSummary) -> str:
    """``, 20 cancelled by client (10.0%)`` after the failed count (workload.cancel), or
    nothing."""
    r = step.requests
    if not r.cancelled_by_client:
        return ""
    return f", {r.cancelled_by_client} cancelled by client ({r.cancelled_by_client_share:.1%})"


def ttft_of_text(step: StepSummary) -> str | None:
    """A note when TTFT is measured to the first answer token rather than any token."""
    if step.ttft_of != "answer":
        return None
    return "TTFT to the first answer token (sla.ttft_of: answer)"
