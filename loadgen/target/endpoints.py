"""Several endpoints (``target.urls``, ``target.mock.replicas``) before and between steps.

Owns what the run does once per endpoint rather than once per run:

- :func:`open_endpoints`: the base URLs requests go to: ``target.url``, the
  ``target.urls`` list, or the local URLs of the built-in mock's replicas;
- :func:`preflight_all`: every endpoint's ``/health`` and ``/v1/models``, in
  list order (``wait_for_health_s`` applies to each in turn); the run's check
  is healthy only if all are, lists the first endpoint's models, and warns when
  another endpoint lists different ones.

Every endpoint's ``/metrics`` is read once per step boundary by
:mod:`~loadgen.target.scrape`, and its figures summed over endpoints by their own
modules (cache, spec_decode, phases).

Calibration (``/tokenize``) and ``telemetry.server_metrics: target`` use the
first endpoint: replicas of one model share its tokenizer.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from loadgen.redact import redact_text, warn
from loadgen.scenario import Scenario
from loadgen.summary import TargetCheck
from loadgen.target.mock import start_mocks
from loadgen.target.options import target_headers, tls_options
from loadgen.target.preflight import check_target

__all__ = ["open_endpoints", "preflight", "preflight_all"]


def open_endpoints(sc: Scenario, out_dir: Path, stack: contextlib.ExitStack) -> list[str]:
    """The base URLs of the run's endpoints; the mocks it starts stop when ``stack`` closes."""
    target = sc.target
    if not target.is_mock:
        return target.endpoints
    if "url" not in target.model_fields_set:
        warn("warning: the scenario gives no target.url: the built-in mock is the target")
    return start_mocks(target, out_dir, stack)


def preflight(sc: Scenario, url: str) -> TargetCheck:
    """One endpoint's check; its warnings (redacted) on stderr too."""
    t = sc.target
    check = check_target(
        url, t.model_names, t.api, target_headers(sc), t.wait_for_health_s, tls_options(sc)
    )
    warnings = [redact_text(w) for w in check.warnings]  # no URL password on screen
    for warning in warnings:
        warn(f"warning: {warning}")
    return TargetCheck(healthy=check.healthy, models=check.models, warnings=warnings)


def preflight_all(sc: Scenario, urls: list[str]) -> TargetCheck:
    """Check each endpoint; warnings (on stderr too) name the endpoint when there are several."""
    if len(urls) == 1:
        return preflight(sc, urls[0])  # one endpoint: the check as it always was
    t = sc.target
    healthy = True
    first_models: list[str] | None = None
    warnings: list[str] = []
    for i, url in enumerate(urls):
        check = check_target(
            url, t.model_names, t.api, target_headers(sc), t.wait_for_health_s, tls_options(sc)
        )
        healthy = healthy and check.healthy
        found = list(check.warnings)
        if i == 0:
            first_models = check.models
        elif check.models is not None and set(check.models) != set(first_models or ()):
            listed = ", ".join(check.models[:5]) or "none"
            found.append(f"it lists other models than {urls[0]} ({listed})")
        base = url.rstrip("/")
        found = [w if w.startswith(base) else f"{base}: {w}" for w in found]
        warnings += [redact_text(w) for w in found]  # no URL password on screen
    for warning in warnings:
        warn(f"warning: {warning}")
    return TargetCheck(healthy=healthy, models=first_models, warnings=warnings)
