"""``workload.cancel``: users who stop reading an answer before its end.

A share of the requests is aborted mid-stream by the client, after a number
of token events (``after_tokens``) or a time since the request was sent
(``after_s``), each drawn per request from a distribution as the other
lengths are. The client closes the connection, as a browser tab that is
closed does; the server sees the disconnect and should free the request's
slot. Which requests, and when, is seeded (:mod:`loadgen.workload.cancel`).

Only streamed answers can be cut: :func:`check_cancel` refuses a pooling API
and ``target.stream: false``.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from loadgen.scenario.dists import Distribution, FloatDistribution
from loadgen.strict import Spec
from loadgen.vocab import POOLING_APIS

__all__ = ["CancelSpec", "check_cancel"]


class CancelSpec(Spec):
    share: float = Field(
        gt=0,
        le=1,
        description="Share of the requests the client aborts mid-stream, in (0, 1]: each "
        "request is picked with this probability (seeded).",
    )
    after_tokens: Distribution | None = Field(
        None,
        description="Abort after this many token events were received (a length "
        "distribution; or give `after_s`).",
    )
    after_s: FloatDistribution | None = Field(
        None,
        description="Abort this many seconds after the request was sent (a seconds "
        "distribution; or give `after_tokens`).",
    )

    @model_validator(mode="after")
    def _one_point(self) -> CancelSpec:
        if (self.after_tokens is None) == (self.after_s is None):
            raise ValueError("give exactly one of `after_tokens` and `after_s`")
        return self


def check_cancel(cancel: CancelSpec | None, api: str, streams: bool) -> None:
    """A ValueError when ``workload.cancel`` is set for answers that are not streamed."""
    if cancel is None or streams:
        return
    if api in POOLING_APIS:
        why = f"target.api {api} answers with one JSON body"
    else:
        why = "target.stream is false: the answer comes in one body"
    msg = f"workload.cancel: {why}, there is no stream to stop; drop workload.cancel"
    raise ValueError(msg)
