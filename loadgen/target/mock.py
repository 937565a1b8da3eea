"""The built-in mock as a target: a child process on a free port.

Never inside the client's event loop, where its work would distort the
timings. Its output goes to a log file (a pipe nobody reads could fill and
stall it); the first ``listening on URL`` line there says it is ready.
Stopped with SIGTERM (then SIGKILL) after the run. On Linux the child also
gets SIGTERM from the kernel when loadgen dies (PR_SET_PDEATHSIG), so even
kill -9 of loadgen leaves no orphan mock behind.

``target.mock.replicas: N`` starts N such children (:func:`start_mocks`), each
on its own free port with its own log (``mock.<i>.log``) and, when the mock
arguments name a ``--truth FILE``, its own truth file (``FILE`` with ``.<i>``
before the suffix). They share the CPUs loadgen leaves to the mock.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType

from loadgen.clock import NS_PER_S, block_for, now_ns
from loadgen.errors import TargetError
from loadgen.scenario import TargetSpec

__all__ = ["MockServer", "mock_args", "replica_args", "start_mocks"]

_READY = re.compile(r"listening on (https?://\S+)")


def mock_args(target: TargetSpec) -> list[str]:
    """``loadgen mock`` arguments for ``target.mock``: its profile, and the scenario's model.

    The mock then lists (and serves) the model the requests name, so the
    pre-flight check finds it; ``model: auto`` takes whatever the mock lists.
    A model mix (``target.models``): the first name is the mock's model, the
    others its LoRA adapters (``--lora``).
    """
    args = list(target.mock.args)
    if target.mock.profile:
        args += ["--profile", target.mock.profile]
    if target.model != "auto" and not any(a == "--model" or a.startswith("--model=") for a in args):
        args += ["--model", target.model]
        for name in target.model_names[1:]:  # a mix: the others as the mock's LoRA adapters
            args += ["--lora", name]
    return args


def start_mocks(target: TargetSpec, out_dir: Path, stack: contextlib.ExitStack) -> list[str]:
    """Start ``target.mock.replicas`` mocks, stopped when ``stack`` closes; their URLs.

    One mock logs to ``mock.log`` as always; replica ``i`` of several to ``mock.<i>.log``.
    """
    args = mock_args(target)
    n = target.mock.replicas
    # once: the replicas share the CPUs loadgen leaves them, given back after the last stops
    cpus = stack.enter_context(_cpus_apart())
    if n == 1:
        return [stack.enter_context(MockServer(args, out_dir / "mock.log", cpus=cpus))]
    return [
        stack.enter_context(MockServer(replica_args(args, i), out_dir / f"mock.{i}.log", cpus=cpus))
        for i in range(n)
    ]


def replica_args(args: Sequence[str], i: int) -> list[str]:
    """``args`` for mock replica ``i``: a ``--truth FILE`` becomes ``FILE`` with ``.i`` before
    its suffix (``truth.jsonl`` -> ``truth.1.jsonl``), so replicas never share one file."""

    def own(path: str) -> str:
        p = Path(path)
        return str(p.with_name(f"{p.stem}.{i}{p.suffix}"))

    out: list[str] = []
    after_truth = False
    for a in args:
        if after_truth:
            a = own(a)
        elif a.startswith("--truth="):
            a = "--truth=" + own(a.removeprefix("--truth="))
        after_truth = a == "--truth"
        out.append(a)
    return out


#: ``MockServer(cpus=...)``: split the CPUs itself (one mock)
_SPLIT = "split"


class MockServer:
    """``with MockServer(args, log) as url:`` runs ``python -m loadgen.mock --port 0 ARGS``.

    ``cpus``: the CPUs the mock runs on (None: any); by default the mock takes
    one CPU and loadgen keeps the others (:func:`_cpus_apart`).
    """

    def __init__(
        self,
        args: list[str],
        log_path: Path,
        *,
        start_timeout_s: float = 30.0,
        cpus: set[int] | str | None = _SPLIT,
    ) -> None:
        self.args = args
        self.log_path = log_path
        self.start_timeout_s = start_timeout_s
        self.cpus = cpus
        self.proc: subprocess.Popen[bytes] | None = None
        self._apart = contextlib.ExitStack()  # a split of its own, undone as it stops

    @property
    def pid(self) -> int | None:
        """The mock's process id while it runs."""
        return self.proc.pid if self.proc is not None else None

    def __enter__(self) -> str:
        cmd = [sys.executable, "-m", "loadgen.mock", "--host", "127.0.0.1", "--port", "0"]
        cpus = self.cpus
        mock_cpus = self._apart.enter_context(_cpus_apart()) if isinstance(cpus, str) else cpus
        die_with_parent = _die_with_parent()

        def in_child() -> None:  # runs in the child before it starts
            if mock_cpus:  # before any thread exists, so every thread of the mock inherits it
                os.sched_setaffinity(0, mock_cpus)
            if die_with_parent is not None:
                die_with_parent()

        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [*cmd, *self.args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=in_child,
                # its own session: a closed terminal's SIGHUP or a Ctrl-C reaches loadgen's
                # group, not the mock, which loadgen stops once the step has wound down
                # (and which dies with loadgen, by die_with_parent)
                start_new_session=True,
            )
        give_up = now_ns() + int(self.start_timeout_s * NS_PER_S)
        while now_ns() < give_up:
            text = self.log_path.read_text(errors="replace")
            match = _READY.search(text)
            if match:
                return match.group(1)
            if self.proc.poll() is not None:
                break
            block_for(0.02)
        self._stop()
        lines = self.log_path.read_text(errors="replace").strip().splitlines()
        last = lines[-1] if lines else "no output"
        raise TargetError(f"the built-in mock did not start ({self.log_path}): {last}")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop()

    def _stop(self) -> None:
        self._apart.close()
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def _cpus_apart() -> Iterator[set[int] | None]:
    """Keep loadgen and the mock on different CPUs while the mock runs, when there are at
    least two; loadgen's own are given back on leaving, so a second run in this process
    (``--repeat``, a library caller) splits them anew rather than sharing loadgen's one.

    On a small machine the scheduler otherwise tends to run the two on one CPU
    and let the process that just wrote keep running while the woken one
    waits, which shows as server-side delay that a real, remote server would
    not have. Yields the CPUs for the mock (loadgen keeps the others), or
    None where affinity cannot be set.
    """
    try:
        cpus = sorted(os.sched_getaffinity(0))
        split = len(cpus) >= 2
        if split:
            os.sched_setaffinity(0, set(cpus[:-1]))
    except (AttributeError, OSError):
        split = False
    if not split:
        yield None
        return
    try:
        yield {cpus[-1]}
    finally:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, set(cpus))


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent() -> Callable[[], None] | None:
    """What the child calls to be sent SIGTERM when this process dies (Linux), else None.

    libc is looked up here, in the parent: the child between fork and exec
    only calls it. Should this process already be gone by then, the child
    exits at once.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return arm
