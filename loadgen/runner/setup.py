"""Before the first step: the results directory, the target's check, calibration, telemetry.

Also the event loop the run uses and quiet garbage collection while it
measures. Warnings go to stderr (:func:`warn`).

Imports: loadgen.client (the requester, TLS options), loadgen.errors,
loadgen.redact, loadgen.scenario, loadgen.summary (the target check),
loadgen.workload (calibration),
loadgen.runner.preflight/calibrate and loadgen.telemetry lazily.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from loadgen.client import (
    ADAPTERS,
    Requester,
    RequestTimeouts,
    TlsOptions,
    make_transport,
    transport_kind,
)
from loadgen.client.request import RequestLimits
from loadgen.errors import OutputError
from loadgen.redact import redact_text
from loadgen.scenario.models import ConcurrencyLoad, LoadSpec, Scenario
from loadgen.summary import TargetCheck
from loadgen.workload.prompts import Calibration

if TYPE_CHECKING:
    from loadgen.telemetry import TelemetryCollector

__all__ = [
    "calibrate_prompts",
    "loop_factory",
    "make_requester",
    "pool_limit",
    "preflight",
    "prepare_out_dir",
    "quiet_gc",
    "resolve_workers",
    "start_telemetry",
    "target_headers",
    "tls_options",
    "warn",
]


def prepare_out_dir(out: Path) -> None:
    """Make ``out`` and check it takes files: an OutputError (exit 2) otherwise."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"results directory {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".loadgen-write-check"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputError(f"results directory {out}: cannot write there: {reason}") from None


def warn(text: str) -> None:
    """One warning or error line, on stderr; a URL's password is left out."""
    print(redact_text(text), file=sys.stderr, flush=True)


def preflight(sc: Scenario, url: str) -> TargetCheck:
    from loadgen.runner.preflight import check_target

    t = sc.target
    check = check_target(
        url, t.model, t.api, target_headers(sc), t.wait_for_health_s, tls_options(sc)
    )
    warnings = [redact_text(w) for w in check.warnings]  # no URL password on screen
    for warning in warnings:
        warn(f"warning: {warning}")
    return TargetCheck(healthy=check.healthy, models=check.models, warnings=warnings)


def calibrate_prompts(sc: Scenario, url: str) -> Calibration | None:
    """Words per token from the server's /tokenize, when no tokenizer makes prompts exact."""
    w = sc.workload
    exact = w.tokenizer is not None or w.prompt_as == "token_ids"
    if exact or not w.calibrate or not sc.target.api.startswith("openai"):
        return None
    from loadgen.runner.calibrate import calibrate

    return calibrate(
        url, sc.target.model, sc.target.api == "openai-chat", target_headers(sc), tls_options(sc)
    )


def target_headers(sc: Scenario) -> dict[str, str]:
    """The scenario's extra headers, with the API key from its environment variable."""
    headers = dict(sc.target.headers)
    key_env = sc.target.api_key_env
    if key_env and os.environ.get(key_env):
        headers["Authorization"] = f"Bearer {os.environ[key_env]}"
    return headers


def tls_options(sc: Scenario) -> TlsOptions:
    return TlsOptions(sc.target.tls.verify, sc.target.tls.ca_file)


def start_telemetry(sc: Scenario, url: str, out_dir: Path) -> TelemetryCollector | None:
    spec = sc.telemetry
    server = spec.server_metrics
    if server == "target":
        server = url.rstrip("/") + "/metrics"
    if not spec.agents and not server:
        return None
    from loadgen.telemetry import TelemetryCollector

    token = os.environ.get(spec.token_env) if spec.token_env else None
    collector = TelemetryCollector(
        list(spec.agents),
        server,
        out_dir / "telemetry.jsonl",
        token,
        spec.interval_s,
        server_tls=tls_options(sc).context(),
    )
    collector.start()
    return collector


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Fewer, cheaper garbage collections while measuring.

    A full collection walks every live object and stalls the event loop, and
    with it every timestamp, for milliseconds. Objects alive at the start are
    frozen out of collections, and the youngest generation is collected
    rarely; the hot path creates little cyclic garbage.
    """
    old = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def pool_limit(load: LoadSpec, workers: int = 1) -> int:
    """Connections one process may need at once (0 = no limit): never a cap on the load.

    With ``workers`` processes, each gets its share of the largest concurrency
    (or ``max_concurrency``) rounded up.
    """
    most = int(max(load.points)) if isinstance(load, ConcurrencyLoad) else load.max_concurrency
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
    return Requester(
        transport,
        ADAPTERS[t.api],
        base_url=list(urls),
        routing=t.routing,
        route_first=worker,
        model=t.model,
        extra_body=dict(t.extra_body),
        headers=target_headers(sc),
        timeouts=RequestTimeouts.from_seconds(s.first_token, s.idle, s.total),
        run_id=run_id,
        stream=t.stream,
        limits=RequestLimits(**t.limits.model_dump()),
    )


def resolve_workers(sc: Scenario, *, ray: bool = False) -> int:
    """``load.workers`` as a number: ``auto`` is one per core this process may use,
    leaving one for the system and one for the built-in mock when it is the target.

    With Ray, ``auto`` is 0: one per CPU of the cluster, known once joined.
    """
    w = sc.load.workers
    if w != "auto":
        return w
    if ray:
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1 - (1 if sc.target.is_mock else 0))
