"""The requester one process sends through, built from the scenario's target.

The adapter is the target's API's; with ``workload.tools`` or
``response_format`` it is one that sends them, and the requester validates
each answer against their schemas.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.client import (
    OutputCheck,
    Requester,
    RequestLimits,
    RequestTimeouts,
    make_adapter,
    make_transport,
    transport_kind,
)
from loadgen.scenario import ConcurrencyLoad, LoadSpec, OfflineLoad, Scenario
from loadgen.target import target_headers, tls_options
from loadgen.workload import output_ask

__all__ = ["make_requester", "pool_limit"]


def pool_limit(load: LoadSpec, workers: int = 1) -> int:
    """Connections one process may need at once (0 = no limit): never a cap on the load.

    With ``workers`` processes, each gets its share of the largest concurrency
    (or ``max_concurrency``) rounded up.
    """
    if isinstance(load, ConcurrencyLoad):
        most: int | None = int(max(load.points))
    elif isinstance(load, OfflineLoad):  # no cap: the whole batch in flight
        most = 0 if load.max_concurrency is None else max(load.max_concurrency)
    else:
        most = load.max_concurrency
    return -(-(most or 0) // workers)


def make_requester(
    sc: Scenario, urls: Sequence[str], run_id: str, limit: int, *, worker: int = 0
) -> Requester:
    """The transport and requester the scenario's target asks for (``limit``: the pool size);
    several ``urls`` are spread over by ``target.routing``, worker k's round robin from k."""
    t = sc.target
    transport = make_transport(
        transport_kind(t.transport, url=urls[0], http2=t.http2),
        http2=t.http2,
        limit=limit,
        connect_timeout_s=t.timeouts_s.connect,
        tls=tls_options(sc),
    )
    s = t.timeouts_s
    output = output_ask(sc.workload)  # the files were checked when the workload was prepared
    return Requester(
        transport,
        make_adapter(t.api, output),
        base_url=list(urls),
        routing=t.routing,
        route_first=worker,
        model=t.model,
        extra_body=dict(t.extra_body),
        headers=target_headers(sc),
        timeouts=RequestTimeouts.from_seconds(s.first_token, s.idle, s.total),
        run_id=run_id,
        stream=t.streams,
        limits=RequestLimits(**t.limits.model_dump()),
        output_check=OutputCheck(output) if output is not None else None,
    )
