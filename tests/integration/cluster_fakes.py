"""A fake dcgm-exporter and a fake Prometheus HTTP API on 127.0.0.1, made from their documents.

:class:`FakeDcgm` serves ``/metrics`` as dcgm-exporter does: ``# HELP``/``# TYPE``
lines from its ``etc/default-counters.csv``, one series per GPU and field with
the labels ``gpu``, ``UUID``, ``device``, ``modelName``, ``Hostname`` and
``DCGM_FI_DRIVER_VERSION``, values changing with every scrape (utilisation,
memory, power, SM clock, temperature) and an energy counter in mJ that
integrates the power it served over the time between scrapes. Every scrape it
answers is kept (:attr:`FakeDcgm.served`), so a test compares what loadgen
wrote with what was served, not with a formula.

:class:`FakePrometheus` serves ``GET /api/v1/query_range`` as the Prometheus
HTTP API documents it: ``{"status": "success", "data": {"resultType": "matrix",
"result": [{"metric": {...}, "values": [[t, "v"], ...]}]}}`` at ``start + k *
step`` up to ``end``; queries it is told to refuse answer 400 with
``{"status": "error", "errorType": "bad_data", "error": ...}``, and queries told
to be garbage answer 200 with text that is not JSON. Every answer is kept
(:attr:`FakePrometheus.served`).

Both run :class:`http.server.ThreadingHTTPServer` in a thread; times are read with
``time.perf_counter_ns`` (loadgen's monotonic clock) and ``time.time``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: (DCGM field, Prometheus type, help) as dcgm-exporter's default-counters.csv has them
FIELDS = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    (
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Total energy consumption since boot (in mJ).",
    ),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
)
MODEL = "NVIDIA H100 80GB HBM3"
FB_TOTAL_MIB = 81559


@dataclass(slots=True)
class DcgmScrape:
    """One answered scrape: when (monotonic ns) and each GPU's values as served."""

    n: int
    t_ns: int
    gpus: dict[int, dict[str, float]]


def _values(n: int, gpu: int) -> dict[str, float]:
    """Scrape ``n``'s values for ``gpu``: each changes from scrape to scrape."""
    used = 20_000 + 1_000 * gpu + 37 * (n % 50)
    return {
        "DCGM_FI_DEV_SM_CLOCK": 1410 + 15 * (n % 4),
        "DCGM_FI_DEV_GPU_TEMP": 40 + gpu + n % 7,
        "DCGM_FI_DEV_POWER_USAGE": 250.0 + 100 * gpu + 7.25 * (n % 9),
        "DCGM_FI_DEV_GPU_UTIL": (11 * n + 30 * gpu) % 101,
        "DCGM_FI_DEV_FB_USED": used,
        "DCGM_FI_DEV_FB_FREE": FB_TOTAL_MIB - used,
    }


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 in a daemon thread, ``handle`` per GET."""

    def __init__(self, handle: Callable[[BaseHTTPRequestHandler], tuple[int, str, bytes]]):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, ctype, body = handle(self)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)


class FakeDcgm:
    """dcgm-exporter's /metrics for ``gpus`` GPUs; ``fail`` makes it answer 500 or garbage."""

    def __init__(self, gpus: int = 2, hostname: str = "gpu-node-1", energy: bool = True):
        self.gpus = gpus
        self.hostname = hostname
        self.energy = energy
        self.served: list[DcgmScrape] = []
        self.failed = 0
        #: the next scrapes' failures, in order: "500" (HTTP 500) or "garbage" (200, no metrics)
        self.fail: list[str] = []
        self._lock = threading.Lock()
        self._energy_mj = dict.fromkeys(range(gpus), 5_000_000.0)
        self._last: tuple[int, dict[int, float]] | None = None
        self._server = _Server(self._handle)
        self.url = f"http://127.0.0.1:{self._server.port}/metrics"

    def close(self) -> None:
        self._server.close()

    def _handle(self, req: BaseHTTPRequestHandler) -> tuple[int, str, bytes]:
        if urlsplit(req.path).path != "/metrics":
            return 404, "text/plain", b"404 page not found\n"
        with self._lock:
            how = self.fail.pop(0) if self.fail else None
            if how is not None:
                self.failed += 1
            if how == "500":
                return 500, "text/plain", b"internal error: DCGM is not reachable\n"
            if how == "garbage":
                return 200, "text/html", b"<html><body>{{{ not prometheus text</body></html>"
            return 200, "text/plain; version=0.0.4; charset=utf-8", self._scrape()

    def _scrape(self) -> bytes:
        now = time.perf_counter_ns()
        n = len(self.served)
        gpus = {g: _values(n, g) for g in range(self.gpus)}
        if self._last is not None:  # the counter integrates the power served last time
            t_last, power = self._last
            for g in gpus:
                self._energy_mj[g] += power[g] * (now - t_last) / 1e6
        self._last = (now, {g: v["DCGM_FI_DEV_POWER_USAGE"] for g, v in gpus.items()})
        if self.energy:
            for g, v in gpus.items():
                v["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] = round(self._energy_mj[g])
        self.served.append(DcgmScrape(n, now, gpus))
        lines = []
        for name, kind, text in FIELDS:
            if name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" and not self.energy:
                continue
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            for g, v in gpus.items():
                labels = (
                    f'gpu="{g}",UUID="GPU-{g:08x}-1111-2222-3333-444455556666",'
                    f'device="nvidia{g}",modelName="{MODEL}",Hostname="{self.hostname}",'
                    'DCGM_FI_DRIVER_VERSION="550.54.15"'
                )
                lines.append(f"{name}{{{labels}}} {v[name]}")
        return ("\n".join(lines) + "\n").encode()


@dataclass(slots=True)
class PromAnswer:
    """One answered range query: its parameters and the series served."""

    query: str
    start: float
    end: float
    step: float
    auth: str | None
    status: int
    series: list[tuple[dict[str, str], list[tuple[float, float]]]] = field(default_factory=list)


#: name -> label sets a query of that name serves (one series or several)
SERIES: dict[str, list[dict[str, str]]] = {
    "sum(vllm:num_requests_running)": [{}],
    "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL)": [
        {"Hostname": "gpu-node-1"},
        {"Hostname": "gpu-node-2"},
        {"Hostname": "gpu-node-3"},
    ],
}


def prom_value(query: str, series: int, t: float) -> float:
    """The value a series serves at Unix time ``t``: it changes with time."""
    return round(len(query) + 10.0 * series + (t * 7.0) % 13.0, 3)


class FakePrometheus:
    """Prometheus's /api/v1/query_range; ``refuse`` and ``garbage`` name queries that fail."""

    def __init__(
        self,
        refuse: tuple[str, ...] = (),
        garbage: tuple[str, ...] = (),
        broken: tuple[str, ...] = (),
    ):
        self.refuse, self.garbage, self.broken = refuse, garbage, broken
        self.served: list[PromAnswer] = []
        self._lock = threading.Lock()
        self._server = _Server(self._handle)
        self.url = f"http://127.0.0.1:{self._server.port}"

    def close(self) -> None:
        self._server.close()

    def _handle(self, req: BaseHTTPRequestHandler) -> tuple[int, str, bytes]:
        parts = urlsplit(req.path)
        if parts.path != "/api/v1/query_range":
            return 404, "text/plain", b"404 page not found"
        q = {k: v[0] for k, v in parse_qs(parts.query).items()}
        query, start, end, step = q["query"], float(q["start"]), float(q["end"]), float(q["step"])
        answer = PromAnswer(query, start, end, step, req.headers.get("Authorization"), 200)
        body: dict[str, Any]
        if query in self.garbage or query in self.broken:
            answer.status = 500 if query in self.broken else 200
            with self._lock:
                self.served.append(answer)
            return answer.status, "text/plain", b"upstream connect error or disconnect/reset"
        if query in self.refuse:
            answer.status = 400
            body = {
                "status": "error",
                "errorType": "bad_data",
                "error": f'1:1: parse error: unexpected identifier "{query[:20]}"',
            }
        else:
            times = []
            t = start
            while t <= end + 1e-9:
                times.append(round(t, 3))
                t += step
            for i, labels in enumerate(SERIES.get(query, [{}])):
                points = [(t, prom_value(query, i, t)) for t in times]
                answer.series.append((labels, points))
            body = {
                "status": "success",
                "data": {
                    "resultType": "matrix",
                    "result": [
                        {"metric": labels, "values": [[t, str(v)] for t, v in points]}
                        for labels, points in answer.series
                    ],
                },
            }
        with self._lock:
            self.served.append(answer)
        return answer.status, "application/json", json.dumps(body).encode()
