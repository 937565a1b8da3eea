"""The target outside the load path: what loadgen asks the server beside the measured requests.

Owns the built-in mock as a child process (:mod:`~loadgen.target.mock`), the
run's endpoints and their pre-flight check (:mod:`~loadgen.target.endpoints`,
:mod:`~loadgen.target.preflight`), words-per-token calibration with the
server's ``/tokenize`` (:mod:`~loadgen.target.tokenize`), the one read of each
endpoint's ``/metrics`` per step boundary (:mod:`~loadgen.target.scrape`) and what
is parsed from it: the prefix-cache counters (:mod:`~loadgen.target.cache`), the
speculative-decoding counters (:mod:`~loadgen.target.spec_decode`) and the
request-phase histograms (:mod:`~loadgen.target.phases`), the headers and
TLS options every call carries (:mod:`~loadgen.target.options`), and
``loadgen init``'s probe of what a server serves (:mod:`~loadgen.target.probe`)
with the commented scenario file tuned to it (:mod:`~loadgen.target.starter`),
and the run's environment (server, GPUs, client) gathered once before the
first step (:mod:`~loadgen.target.environment`), with the dtype, quantization
and KV cache dtype the server states and where (:mod:`~loadgen.target.precision`).
Every request it makes goes through :mod:`loadgen.control`, bounded in size
and time.

May import: loadgen._version, clock, control, errors, redact, scenario, summary, workload
(prompts), client (TLS options; the adapters' paths and headers), telemetry (the
Prometheus parser and the engines' metric names), vocab.
Never the load path's stages above it (execute, scale, run) nor the mock's
code: the mock is started as ``python -m loadgen.mock``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.lazy import lazy_exports

if TYPE_CHECKING:
    from loadgen.target.cache import prefix_cache_delta
    from loadgen.target.endpoints import open_endpoints, preflight_all
    from loadgen.target.environment import environment_of
    from loadgen.target.mock import MockServer, mock_args
    from loadgen.target.options import target_headers, tls_options
    from loadgen.target.phases import time_split
    from loadgen.target.preflight import pick_model
    from loadgen.target.probe import Probe, probe_server
    from loadgen.target.scrape import scrape_boundary
    from loadgen.target.spec_decode import spec_decode_delta
    from loadgen.target.starter import found_lines, starter_text
    from loadgen.target.tokenize import calibrate_prompts

_EXPORTS = {
    "MockServer": "mock",
    "Probe": "probe",
    "calibrate_prompts": "tokenize",
    "environment_of": "environment",
    "found_lines": "starter",
    "mock_args": "mock",
    "open_endpoints": "endpoints",
    "pick_model": "preflight",
    "prefix_cache_delta": "cache",
    "preflight_all": "endpoints",
    "probe_server": "probe",
    "scrape_boundary": "scrape",
    "spec_decode_delta": "spec_decode",
    "starter_text": "starter",
    "target_headers": "options",
    "time_split": "phases",
    "tls_options": "options",
}

__all__ = [
    "MockServer",
    "Probe",
    "calibrate_prompts",
    "environment_of",
    "found_lines",
    "mock_args",
    "open_endpoints",
    "pick_model",
    "prefix_cache_delta",
    "preflight_all",
    "probe_server",
    "scrape_boundary",
    "spec_decode_delta",
    "starter_text",
    "target_headers",
    "time_split",
    "tls_options",
]

if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
