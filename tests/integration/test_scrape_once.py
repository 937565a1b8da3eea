"""One GET of ``/metrics`` per endpoint per step boundary, in a whole run against two mocks.

Each mock sits behind a small counting proxy on 127.0.0.1 that passes every request
through and counts them by method and path. Over a two-step run with shared
prefixes and the mock's simulated draft model, each endpoint sees exactly two
``/metrics`` GETs a step (before and after it), plus the first endpoint's one read
of the environment before the first step, and every step still has its prefix-cache
hit rate, speculative-decoding figures and time split, all read from those GETs.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.target.mock import MockServer

#: hop-by-hop or length headers the proxy sets itself
_OWN = {"connection", "content-length", "keep-alive", "transfer-encoding"}


@contextlib.contextmanager
def counting_proxy(upstream: str) -> Iterator[tuple[str, Counter[tuple[str, str]]]]:
    """``(url, counts)``: a proxy to ``upstream`` that counts (method, path) it passes on;
    each answer is read whole and sent with its length (timing is not under test)."""
    up = urlsplit(upstream)
    counts: Counter[tuple[str, str]] = Counter()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the load path expects

        def _pass(self) -> None:
            with lock:
                counts[(self.command, self.path.split("?")[0])] += 1
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            heads = {k: v for k, v in self.headers.items() if k.lower() not in _OWN}
            conn = http.client.HTTPConnection(up.hostname or "", up.port, timeout=60)
            try:
                conn.request(self.command, self.path, body=body, headers=heads)
                reply = conn.getresponse()
                data = reply.read()
            finally:
                conn.close()
            self.send_response(reply.status)
            for k, v in reply.getheaders():
                if k.lower() not in _OWN:
                    self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _pass

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", counts
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_each_boundary_reads_each_endpoints_metrics_once(tmp_path: Path) -> None:
    mock_args = ["--model", "m", "--spec-decode", "3:0.7", "--step-base-ms", "8"]  # engine mode
    with contextlib.ExitStack() as stack:
        proxies = []
        for i in range(2):
            mock = stack.enter_context(MockServer(mock_args, tmp_path / f"mock{i}.log"))
            proxies.append(stack.enter_context(counting_proxy(mock)))
        sc = Scenario.model_validate(
            {
                "name": "scrape-once",
                "target": {
                    "urls": [url for url, _ in proxies],
                    "api": "openai-chat",
                    "model": "m",
                    "extra_body": {"ignore_eos": True},
                },
                "workload": {
                    "calibrate": False,
                    "prompt_tokens": {"dist": "fixed", "value": 64},
                    "output_tokens": {"dist": "fixed", "value": 8},
                    "prefix": {"tokens": 48, "groups": 1},
                },
                "load": {
                    "mode": "concurrency",
                    "concurrency": [1, 2],
                    "requests_per_step": 6,
                    "warmup_requests": 0,
                },
            }
        )
        summary = run_scenario(sc, RunOptions(tmp_path / "out", quiet=True, reports=False))
        metrics_gets = [counts[("GET", "/metrics")] for _, counts in proxies]
        posts = [sum(n for (m, _), n in counts.items() if m == "POST") for _, counts in proxies]
    steps = summary.steps
    assert len(steps) == 2 and all(s.requests.failed == 0 for s in steps)
    assert sum(posts) >= 12 and all(p > 0 for p in posts)  # both endpoints served the load
    # two boundaries a step, one GET each; the first endpoint's environment read (once)
    assert metrics_gets == [2 * len(steps) + 1, 2 * len(steps)]
    for step in steps:
        assert step.prefix_cache is not None and step.prefix_cache.queries_tokens
        assert step.spec_decode is not None and step.spec_decode.drafts > 0
        assert step.time_split is not None and step.time_split.server_e2e is not None
        # every request of the step finished between its two reads, on one endpoint or other
        assert step.time_split.server_e2e.count == step.requests.total == 6
