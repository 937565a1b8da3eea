"""The step boundary's one read of ``/metrics``: servers on 127.0.0.1 that count each GET.

Each server answers ``/metrics`` with a status and body the test sets and counts
the GETs by path; a boundary must ask each endpoint exactly once and give the
three parsers the same text, and a server without a usable ``/metrics`` (404,
500, garbage, nothing listening) gives None parts, never an error.
"""

from __future__ import annotations

import socket
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from loadgen.scenario import Scenario
from loadgen.target.cache import prefix_cache_counters, prefix_cache_delta
from loadgen.target.phases import phase_histograms, time_split
from loadgen.target.scrape import Boundary, fetch_metrics_all, read_boundary, scrape_boundary
from loadgen.target.spec_decode import spec_decode_counters, spec_decode_delta

LAB = 'model_name="m",engine="0"'


def exposition(served: int) -> str:
    """vLLM-like ``/metrics`` after ``served`` requests: every figure moves with it."""
    n = float(served)
    lines = [
        f"vllm:prefix_cache_queries_total{{{LAB}}} {100 * n}",
        f"vllm:prefix_cache_hits_total{{{LAB}}} {40 * n}",
        f"vllm:spec_decode_num_drafts_total{{{LAB}}} {10 * n}",
        f"vllm:spec_decode_num_draft_tokens_total{{{LAB}}} {30 * n}",
        f"vllm:spec_decode_num_accepted_tokens_total{{{LAB}}} {15 * n}",
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{LAB},position="0"}} {8 * n}',
    ]
    for le, count in (("0.1", n), ("1.0", 2 * n), ("+Inf", 2 * n)):
        lines.append(f'vllm:e2e_request_latency_seconds_bucket{{{LAB},le="{le}"}} {count}')
    lines += [
        f"vllm:e2e_request_latency_seconds_sum{{{LAB}}} {0.25 * n}",
        f"vllm:e2e_request_latency_seconds_count{{{LAB}}} {2 * n}",
    ]
    return "\n".join(lines) + "\n"


class CountingServer:
    """``/metrics`` on 127.0.0.1 with a settable status and body; ``gets`` counts by path."""

    def __init__(self, body: str = "", status: int = 200) -> None:
        self.body, self.status = body, status
        self.gets: Counter[str] = Counter()
        self.auth: list[str | None] = []  # each GET's Authorization header
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.gets[self.path] += 1
                owner.auth.append(self.headers.get("Authorization"))
                data = owner.body.encode() if self.path == "/metrics" else b""
                self.send_response(owner.status if self.path == "/metrics" else 404)
                self.send_header("content-type", "text/plain; version=0.0.4")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass  # quiet

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def servers() -> Iterator[list[CountingServer]]:
    made = [CountingServer(exposition(1)), CountingServer(exposition(2))]
    yield made
    for s in made:
        s.close()


def scenario(urls: list[str], **target: object) -> Scenario:
    return Scenario.model_validate(
        {
            "name": "scrape",
            "target": {"urls": urls, "model": "m", **target},
            "load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 1},
        }
    )


def test_a_boundary_asks_each_endpoint_once_and_parses_the_same_text(
    servers: list[CountingServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRAPE_TEST_KEY", "k-123")
    urls = [s.url for s in servers]
    sc = scenario(urls, api_key_env="SCRAPE_TEST_KEY")
    before = scrape_boundary(sc, urls)
    assert [s.gets for s in servers] == [Counter({"/metrics": 1})] * 2
    # the target's headers go with the scrape, as with every request to the target
    assert [s.auth for s in servers] == [["Bearer k-123"]] * 2
    for s, served in zip(servers, (3, 5), strict=True):  # the step: 2 and 3 more requests
        s.body = exposition(served)
    after = scrape_boundary(sc, urls)
    assert [s.gets for s in servers] == [Counter({"/metrics": 2})] * 2
    # summed over the endpoints: 1 + 2 requests before, 3 + 5 after
    assert before.prefix_cache == {"queries": 300.0, "hits": 120.0, "source": 0.0}
    assert after.prefix_cache == {"queries": 800.0, "hits": 320.0, "source": 0.0}
    cache = prefix_cache_delta(before.prefix_cache, after.prefix_cache)
    assert cache is not None and cache.queries_tokens == 500.0 and cache.hit_rate == 0.4
    totals = {"drafts": 80.0, "draft_tokens": 240.0, "accepted": 120.0, "pos0": 64.0}
    assert after.spec_decode == totals
    spec = spec_decode_delta(before.spec_decode, after.spec_decode)
    assert spec is not None and spec.acceptance_rate == 0.5 and spec.drafts == 50.0
    assert before.phases is not None and after.phases is not None
    e2e = after.phases["vllm:e2e_request_latency_seconds"]
    assert e2e.count == 16.0 and e2e.total == pytest.approx(2.0)
    split = time_split(before.phases, after.phases, client_e2e_mean_ms=150.0)
    assert split is not None and split.server_e2e is not None
    assert split.server_e2e.count == 10.0  # 16 - 6 requests finished over the step
    assert split.server_e2e.mean_ms == pytest.approx(125.0)
    assert split.network_ms == pytest.approx(25.0)


def test_read_boundary_is_the_three_parsers_of_the_same_texts() -> None:
    texts: list[str | None] = [exposition(4)]
    got = read_boundary(texts)
    assert got == Boundary(
        prefix_cache=prefix_cache_counters(exposition(4)),
        spec_decode=spec_decode_counters(exposition(4)),
        phases=phase_histograms(exposition(4)),
    )
    assert got.prefix_cache is not None and got.spec_decode is not None and got.phases
    assert read_boundary([None]) == Boundary(None, None, None)
    assert read_boundary([exposition(4), None]) == Boundary(None, None, None)  # no partial sums


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, "not found\n"),
        (500, exposition(1)),  # an error status: the body is not read, even a good one
        (200, "\x00\xff garbage {{{\nnot prometheus at all\n"),
        (200, ""),
    ],
)
def test_a_metrics_without_figures_gives_none_parts(
    status: int, body: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server = CountingServer(body, status)
    try:
        sc = scenario([server.url])
        assert scrape_boundary(sc, [server.url]) == Boundary(None, None, None)
        assert server.gets == Counter({"/metrics": 1})
        texts = fetch_metrics_all(sc, [server.url])
        assert (texts == [None]) == (status != 200)
    finally:
        server.close()
    assert capsys.readouterr().err == ""  # a server without /metrics says nothing


def test_nothing_listening_gives_none_parts_and_the_other_endpoint_is_still_asked(
    servers: list[CountingServer], capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    urls = [dead, servers[0].url]
    got = scrape_boundary(scenario(urls), urls)
    assert got == Boundary(None, None, None)  # one endpoint missing: no partial sums
    assert servers[0].gets == Counter({"/metrics": 1})
    assert capsys.readouterr().err == ""
