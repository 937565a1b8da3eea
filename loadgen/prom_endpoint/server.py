"""The exporter's HTTP side: ``GET /metrics`` (Prometheus text) and ``GET /health``.

A small threaded WSGI server (the standard library's) in a daemon thread, so
a scrape never runs on the load's event loop: rendering is the scrape
thread's, the loop only bumps counts. ``prometheus_client``'s WSGI app
renders the registry (content negotiation, gzip, ``name[]`` filters). A
token, when set, is required on ``/metrics`` as ``Authorization: Bearer
<token>``, checked as the agent checks it (:func:`loadgen.bearer.bearer_matches`);
``/health`` is public, as the agent's is. A client gets
:data:`CLIENT_TIMEOUT_S` to send its request.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from loadgen.bearer import bearer_matches

__all__ = ["CLIENT_TIMEOUT_S", "MetricsServer"]

#: seconds a connection may take to send its request (and between requests)
CLIENT_TIMEOUT_S = 5.0

StartResponse = Callable[..., Any]
Environ = dict[str, Any]


class _Handler(WSGIRequestHandler):
    timeout = CLIENT_TIMEOUT_S

    def log_message(self, format: str, *args: Any) -> None:  # the base's name
        pass  # no access log on the run's stderr


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _Server6(_Server):
    address_family = socket.AF_INET6


def _reply(
    start: StartResponse, status: str, body: bytes, extra: Iterable[tuple[str, str]] = ()
) -> list[bytes]:
    start(status, [("Content-Type", "text/plain; charset=utf-8"), *extra])
    return [body]


class MetricsServer:
    """Serves ``registry`` on ``host:port`` (0: a free port, see :attr:`port`) until closed."""

    def __init__(
        self, registry: CollectorRegistry, host: str, port: int, token: str | None
    ) -> None:
        metrics = make_wsgi_app(registry)

        def app(environ: Environ, start: StartResponse) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "")
            if path == "/health":
                return _reply(start, "200 OK", b"ok\n")
            if path != "/metrics":
                return _reply(start, "404 Not Found", b"not found: try /metrics\n")
            if token is not None and not bearer_matches(environ.get("HTTP_AUTHORIZATION"), token):
                extra = [("WWW-Authenticate", "Bearer")]
                return _reply(start, "401 Unauthorized", b"missing or wrong bearer token\n", extra)
            out: Iterable[bytes] = metrics(environ, start)
            return out

        cls = _Server6 if ":" in host else _Server
        self._httpd = make_server(host, port, app, server_class=cls, handler_class=_Handler)
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="loadgen-metrics",
            daemon=True,
        )

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/metrics"

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=2.0)
