"""What a pooling API (``openai-embeddings``, ``rerank``) allows of the rest of a scenario.

A pooling request is answered with one JSON body and generates no tokens, so
the bounds on token timing (``sla.ttft_ms``, ``itl_ms``, ``tpot_ms``) have
nothing to measure: each is refused with one line naming the field.
``target.stream`` is ignored (``TargetSpec.streams`` is False for a pooling
API): the resolved scenario a run saves spells ``stream: true`` out, and it
must load back. The workload fields of one
pooling API are refused with the other APIs (``workload.batch`` is for
embeddings, ``workload.documents`` and ``workload.query_tokens`` for rerank),
and prompts the pooling workload cannot make (a dataset, shared prefixes,
sessions, a trace's lengths) are refused with them.

:func:`check_pooling` raises ``ValueError`` (the scenario's validator turns it
into the one-line error); the scenario model calls it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.vocab import POOLING_APIS

if TYPE_CHECKING:
    from loadgen.scenario.loadspec import LoadSpec
    from loadgen.scenario.target_spec import TargetSpec
    from loadgen.scenario.workload_spec import WorkloadSpec

__all__ = ["TOKEN_TIMING_BOUNDS", "check_pooling"]

#: SLA bounds on token timing: a pooling answer has no first token nor gaps between tokens
TOKEN_TIMING_BOUNDS = ("ttft_ms", "itl_ms", "tpot_ms")

#: workload field -> the one api that uses it
_FIELD_API = {"batch": "openai-embeddings", "documents": "rerank", "query_tokens": "rerank"}


def check_pooling(
    target: TargetSpec, workload: WorkloadSpec, load: LoadSpec, bounded: set[str]
) -> None:
    """Refuse what a pooling ``target.api`` cannot do, and pooling fields with another api.

    ``bounded``: the ``sla`` fields that state a bound (e.g. ``{"ttft_ms", "e2e_ms"}``).
    """
    api = target.api
    for name, wants in _FIELD_API.items():
        if getattr(workload, name) is not None and api != wants:
            raise ValueError(f"workload.{name} needs target.api {wants}, not {api}")
    if api not in POOLING_APIS:
        return
    for metric in TOKEN_TIMING_BOUNDS:
        if metric in bounded:
            raise ValueError(
                f"sla.{metric}: target.api {api} answers with one JSON body and generates no "
                "tokens: there is no first token or token gap to bound; bound sla.e2e_ms instead"
            )
    for name in ("dataset", "prefix", "sessions"):
        if getattr(workload, name) is not None:
            raise ValueError(
                f"workload.{name}: target.api {api} sends synthetic inputs of "
                f"workload.prompt_tokens; drop workload.{name}"
            )
    if load.mode == "trace":
        raise ValueError(
            f"load.mode trace: target.api {api} takes its lengths from workload "
            "(prompt_tokens, batch, documents), not from a trace"
        )
