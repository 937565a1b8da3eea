"""What went wrong in a step, said on the terminal: errors by kind, one example, a hint.

A failed request is a record (``error_kind``, ``error_detail``); this module
turns a step's failed records into a few lines for stderr, with a hint where
the cause is known (nothing listening at the URL, a URL ending in ``/v1``,
a model the server does not serve, an https certificate nobody vouched for,
credentials missing or refused).

Pure functions: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from loadgen.metrics import ErrorTally
from loadgen.records import Record
from loadgen.redact import redact_text
from loadgen.summary import Summary

__all__ = ["TargetFacts", "error_lines", "hint", "unusable_reason"]

#: an example detail is cut to this many characters
DETAIL_CHARS = 90

#: what resolvers say about a host name that does not exist (glibc, macOS, Windows)
_NO_SUCH_HOST = (
    "name or service not known",
    "nodename nor servname",
    "no address associated",
    "temporary failure in name resolution",
    "getaddrinfo failed",
)


@dataclass(slots=True, frozen=True)
class TargetFacts:
    """What the hints need to know about the target."""

    url: str  # as the scenario gives it (not the built-in mock's port)
    model: str
    models: list[str] | None = None  # what /v1/models listed, None when it did not answer
    #: several endpoints: each one's URL (a record's ``endpoint`` indexes it); else empty
    urls: tuple[str, ...] = ()
    #: ``target.api_key_env``: the variable the key came from (the loader refused it unset)
    api_key_env: str | None = None

    def at(self, endpoint: int | None) -> TargetFacts:
        """The facts as seen from one endpoint: its URL in place of the first."""
        if endpoint is None or not 0 <= endpoint < len(self.urls):
            return self
        return replace(self, url=self.urls[endpoint])


def hint(kind: str, detail: str, target: TargetFacts) -> str | None:
    """The likely cause of ``kind`` and what to change, or None when no cause is known."""
    text = detail.lower()
    if "certificate_verify_failed" in text or "certificate verify failed" in text:
        return (
            "the server's certificate is not trusted: give its CA as target.tls.ca_file "
            "(or target.tls.verify: false)"
        )
    if kind == "connect_error":
        if any(word in text for word in _NO_SUCH_HOST):
            host = urlsplit(target.url).hostname
            return f"the host name {host!r} does not resolve: check target.url"
        return f"is the server running at {target.url}?"
    if kind == "connect_timeout":
        return f"nothing answered at {target.url} within target.timeouts_s.connect"
    if kind.startswith("http_"):
        path = urlsplit(target.url).path.rstrip("/")
        if kind == "http_404" and path.endswith("/v1"):
            return f"target.url ends in /v1 and loadgen adds /v1/...: drop /v1 ({target.url})"
        if target.models is not None and target.model not in target.models:
            served = ", ".join(target.models[:5]) or "none"
            return f"model {target.model!r} is not served; the server lists: {served}"
        if kind in ("http_401", "http_403"):
            return _credentials_hint(kind, target)
        if kind == "http_404":
            return "the server has no such endpoint: check target.url and target.api"
    if kind == "first_token_timeout":
        return "no first token in time: raise target.timeouts_s.first_token or lower the load"
    return None


def _credentials_hint(kind: str, target: TargetFacts) -> str:
    if target.api_key_env is None:
        return (
            "the server wants credentials: set target.api_key_env to the environment "
            "variable holding the API key"
        )
    var = target.api_key_env
    if kind == "http_401":
        return f"the server refused the API key in ${var} (target.api_key_env): check the key"
    return (
        f"the API key in ${var} (target.api_key_env) may not do this: check its "
        f"permissions for model {target.model!r}"
    )


def error_lines(failures: ErrorTally | Iterable[Record], target: TargetFacts) -> list[str]:
    """``errors: N kind: example`` per kind, most frequent first, each with its hint.

    ``failures``: a step's tally (``StepColumns.failures``), or its records. The
    hint is for the endpoint the example failed at.
    """
    tally = failures if isinstance(failures, ErrorTally) else ErrorTally.of(failures)
    counts, examples = tally.counts, tally.examples
    where = {kind: target.at(tally.endpoints.get(kind)) for kind in counts}
    lines: list[str] = []
    for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        # redacted before it is cut short: a secret cut in two is no longer found
        example = redact_text(" ".join(examples[kind].split()))
        if len(example) > DETAIL_CHARS:
            example = example[: DETAIL_CHARS - 3] + "..."
        apart = tally.unmeasured.get(kind)
        count = f"{n} {kind}" + (f" ({apart} of them warm-up or ramp-up)" if apart else "")
        lines.append(f"  errors: {count}" + (f": {example}" if example else ""))
        if (h := hint(kind, examples[kind], where[kind])) is not None:
            lines.append(f"    hint: {h}")
    return [redact_text(line) for line in lines]  # no URL password on the terminal


def unusable_reason(summary: Summary) -> str | None:
    """Why the target was unusable, or None when a request succeeded (or none was measured)."""
    at = summary.target_url if not summary.endpoints else f"{len(summary.endpoints)} endpoints"
    if summary.stopped_on_errors is not None:
        return (
            f"target unusable: stopped at {at}: {summary.stopped_on_errors}; "
            "the errors and hints are above"
        )
    steps = [s for s in summary.steps if not s.interrupted]
    if not steps or summary.interrupted:
        return None
    if any(s.requests.ok > 0 for s in summary.steps):
        return None
    counts: dict[str, int] = {}
    for s in steps:
        for kind, n in s.requests.errors.items():
            counts[kind] = counts.get(kind, 0) + n
    if not counts:
        return None
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    return (
        f"target unusable: no request succeeded at {at} ({kinds}); the errors and hints are above"
    )
