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

Public names: MockServer, start_mocks, open_endpoints, preflight_all,
scrape_boundary, check_target, pick_model, calibrate_prompts,
prefix_cache_delta, target_headers, tls_options; probe_server, starter_text
and environment_of (from their modules).
"""
