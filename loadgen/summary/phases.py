"""What a new connection cost beside a reused one: the step's request phases.

Owns :class:`ConnectionPhases` and :class:`PhaseGroup`, filled from each
request's phase stamps (``Record.new_connection``, ``connect_ns``, ``tls_ns``):
what keep-alive saves, what a TLS handshake costs under load.
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["NEW_SHARE_NOTE", "ConnectionPhases", "PhaseGroup"]

#: the console and report say a line on connections when at least this share of the
#: measured successful requests came on new ones (a kept-alive run opens about one per
#: concurrent stream, a small share of a step: nothing to say then)
NEW_SHARE_NOTE = 0.05


class PhaseGroup(Strict):
    """The successful measured requests sent on new (or on reused) connections."""

    requests: int = Field(description="Requests in the group.")
    connect_ms_p50: float | None = Field(
        None,
        description="TCP connect time (connect_ns - connect_start_ns), median, ms; null "
        "for reused connections or a transport that does not stamp it.",
    )
    connect_ms_p99: float | None = Field(None, description="TCP connect time, p99, ms.")
    tls_ms_p50: float | None = Field(
        None,
        description="TLS handshake time (tls_ns - connect_ns), median, ms; null for plain "
        "http, reused connections or a transport that does not stamp it.",
    )
    tls_ms_p99: float | None = Field(None, description="TLS handshake time, p99, ms.")
    ttft_ms_p50: float | None = Field(
        None,
        description="TTFT from start_ns (loadgen began the request, before any connection "
        "set-up) to the first token, median, ms; null when no request had a token.",
    )


class ConnectionPhases(Strict):
    """Over the step's successful measured requests whose transport said whether their
    connection was new."""

    new: PhaseGroup = Field(description="Requests that were the first on their connection.")
    reused: PhaseGroup = Field(description="Requests sent on a kept-alive connection.")
    unknown: int = Field(
        0, description="Successful measured requests whose transport could not tell."
    )

    @property
    def new_share(self) -> float:
        """New-connection requests over those whose connection is known (0..1)."""
        known = self.new.requests + self.reused.requests
        return self.new.requests / known if known else 0.0
