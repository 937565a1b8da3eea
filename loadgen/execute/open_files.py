"""Enough open files for the planned load, checked before the run.

Every request in flight holds a socket, and so does the built-in mock's end of
it. With the shell's usual soft limit (``ulimit -n`` 1024, or 256 on some
systems) a run of 400 concurrent requests used to fail mid-step: connects that
fail ``EMFILE`` (counted ``connect_error`` with the hint "is the server
running"), or a traceback from an import that could not open its file.
:func:`ensure_open_files` compares the limit (``RLIMIT_NOFILE``) with the
requests one process will hold at once (:func:`planned_in_flight`, shared over
``load.workers`` or, for the built-in mock, over its replicas) plus
:data:`OPEN_FILES_MARGIN` for loadgen's own files. Below that, it raises the
soft limit, with a quarter more for connections being replaced
(:data:`OPEN_FILES_HEADROOM`) where the hard limit allows, to at least what
is needed (the workers and the mock, started later, inherit it); where the
hard limit is lower or the system refuses, it refuses the run in one line that
says the ``ulimit -n`` to run (or, above the hard limit, the container's
``nofile`` limit to raise). Where the load has no cap (an open loop without
``max_concurrency``), the soft limit is raised as far as the hard one allows.
"""

from __future__ import annotations

from loadgen.errors import ScenarioError
from loadgen.scenario import ConcurrencyLoad, OfflineLoad, RateLoad, Scenario

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

__all__ = [
    "MAX_OPEN_FILES",
    "OPEN_FILES_HEADROOM",
    "OPEN_FILES_MARGIN",
    "ensure_open_files",
    "planned_in_flight",
]

#: files a loadgen process holds besides its connections: stdio, records and
#: telemetry files, the event loop, pipes to workers and the mock, agents' and
#: /metrics connections, modules imported mid-run
OPEN_FILES_MARGIN = 128
#: a raise asks for one more file per this many connections, where the hard limit allows:
#: a connection being replaced (closing, or an unread answer drained for up to
#: ``DRAIN_S``) holds its socket while the new one opens
OPEN_FILES_HEADROOM = 4
#: the most a soft limit is raised to when the load names no cap (Linux's nr_open default)
MAX_OPEN_FILES = 1_048_576


def planned_in_flight(sc: Scenario) -> tuple[int, str] | None:
    """The most requests the scenario keeps in flight at once, and the field that says so;
    None when nothing caps it (an open loop or a trace without ``max_concurrency``)."""
    load = sc.load
    if isinstance(load, ConcurrencyLoad):
        return max(load.concurrency), "load.concurrency"
    if isinstance(load, OfflineLoad):
        batch = load.requests_per_step or 0
        if load.max_concurrency:
            return min(batch, max(load.max_concurrency)), "load.max_concurrency"
        return batch, "load.requests_per_step (mode offline sends them at once)"
    if load.max_concurrency is None:
        return None
    if isinstance(load, RateLoad) and load.sweep == "auto":
        return max(load.max_concurrency, load.probe_concurrency), "load.max_concurrency"
    return load.max_concurrency, "load.max_concurrency"


def ensure_open_files(sc: Scenario, workers: int) -> None:
    """Make the open-file limit fit the planned load, or refuse it (ScenarioError, exit 2).

    ``workers``: the processes the load is shared over (the run's own: 1).
    """
    if resource is None:  # pragma: no cover - not POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = MAX_OPEN_FILES if hard == resource.RLIM_INFINITY else hard
    planned = planned_in_flight(sc)
    if planned is None:  # no cap: as many as the hard limit allows
        if soft != resource.RLIM_INFINITY and soft < top:
            _raise_to(min(top, MAX_OPEN_FILES), hard)
        return
    n, field = planned
    per = -(-n // max(1, workers))
    if sc.target.is_mock:  # the mock's end of every connection, in its own process(es)
        per = max(per, -(-n // sc.target.mock.replicas))
    need = per + OPEN_FILES_MARGIN
    want = need + per // OPEN_FILES_HEADROOM
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    if need <= top and _raise_to(min(want, top), hard):
        return
    where = f"{per} connections a process" if per != n else f"{n} connections"
    if need <= top:  # within the hard limit, and still refused
        how = f"the system refused to raise it to {min(want, top)}: run `ulimit -n {want}` first"
    else:
        how = (
            f"at most {hard} (the hard limit): run `ulimit -n {want}` first (as root), or "
            f"raise the container's limit (`docker run --ulimit nofile={want}:{want}`, "
            "the runtime's default nofile)"
        )
    raise ScenarioError(
        f"{field} {n}: needs about {need} open files ({where} and {OPEN_FILES_MARGIN} for "
        f"loadgen's own), but this process may open {soft}, {how}; or lower "
        f"{field.split(' ')[0]}"
    )


def _raise_to(soft: int, hard: int) -> bool:
    """Set the soft limit to ``soft``; False when the system refuses."""
    assert resource is not None
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    except (ValueError, OSError):
        return False
    return True
