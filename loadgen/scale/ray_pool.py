"""Workers as Ray actors, for load that one machine cannot send (``--ray``).

The same worker code as :mod:`loadgen.scale.worker` runs inside each
actor; only the way it reaches the parent differs. The parent listens on a
TCP port; each actor connects back and names itself with a secret made for
this run, then speaks the same frames as a local worker. Records and
reports come back over that connection, so nothing needs a shared
filesystem (the scenario's input files, a dataset or trace, must exist at
the same path on every node, as loadgen itself must be installed there).

Monotonic clocks on different machines share no zero: after connecting,
the parent measures each worker's offset (the clock reading with the
shortest round trip, good to half of it), gives each worker the step's
common start in its own clock, and moves every record's times onto its
own. Latencies are only ever differences inside one worker.

``--ray local`` starts a private Ray instance for this run (and stops it
after); ``--ray auto`` joins the cluster Ray finds (``RAY_ADDRESS`` or one
started with ``ray start`` on this machine); anything else is a cluster
address (``ray://head:10001``, ``host:6379``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import secrets
import socket
from typing import Any

from loadgen.errors import LoadgenError, ScenarioError
from loadgen.scale.frames import read_frame
from loadgen.scale.pool import START_TIMEOUT_S, Worker, WorkerPool
from loadgen.scale.worker import WorkerConfig, serve
from loadgen.scenario import Scenario
from loadgen.workload import Workload

__all__ = ["RayPool", "RayWorker"]


class RayWorker:
    """The actor: one worker, connected back to the parent at ``host:port``."""

    def serve(self, host: str, port: int, hello: bytes, config: WorkerConfig) -> None:
        async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            return await asyncio.open_connection(host, port, limit=1 << 20)

        serve(connect, config, hello)

    def pid(self) -> int:
        return os.getpid()


class RayPool(WorkerPool):
    """A worker pool whose workers are Ray actors."""

    def __init__(self, workers: list[Worker], actors: list[Any], refs: list[Any], local: bool):
        super().__init__(workers)
        self._actors = actors
        self._refs = refs
        self._local = local

    @classmethod
    async def start_ray(
        cls,
        scenario: Scenario,
        urls: list[str],
        run_id: str,
        workload: Workload,
        n: int,
        address: str,
    ) -> RayPool:
        """Join (or start) the cluster, start ``n`` actors, wait until each has connected.

        ``n`` 0: one actor per CPU of the cluster.
        """
        try:
            ray: Any = importlib.import_module("ray")  # optional; untyped use on purpose
        except ImportError:
            msg = "--ray: Ray is not installed (pip install 'loadgen[ray]')"
            raise ScenarioError(msg) from None
        local = address == "local"
        if not local and address != "auto":
            _check_reachable(address)  # Ray itself retries an unreachable address for ever
        try:
            quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
            if local:
                ray.init(num_cpus=n or None, include_dashboard=False, **quiet)
            else:
                ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise LoadgenError(f"--ray {address}: cannot join the cluster: {exc}") from None
        n = n or max(1, int(ray.cluster_resources().get("CPU", 1)))
        host = "127.0.0.1" if local else ray.util.get_node_ip_address()
        secret = secrets.token_hex(16).encode()
        arrived: asyncio.Queue[tuple[int, asyncio.StreamReader, asyncio.StreamWriter]]
        arrived = asyncio.Queue()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                async with asyncio.timeout(10):
                    hello = await read_frame(reader)
            except (TimeoutError, asyncio.IncompleteReadError, OSError):
                writer.close()
                return
            if not hello.startswith(b"H" + secret + b" "):
                writer.close()  # not one of ours
                return
            await arrived.put((int(hello.split(b" ")[1]), reader, writer))

        server = await asyncio.start_server(on_connect, host, 0, limit=1 << 20)
        port = server.sockets[0].getsockname()[1]
        actor_class = ray.remote(num_cpus=1)(RayWorker)
        actors = [actor_class.remote() for _ in range(n)]
        refs = []
        for i, actor in enumerate(actors):
            config = WorkerConfig(scenario, urls, run_id, workload.maker.calibration, i, n, 0)
            hello = b"H" + secret + b" " + str(i).encode()
            refs.append(actor.serve.remote(host, port, hello, config))
        workers: list[Worker] = [Worker(i, None, None) for i in range(n)]
        pool = cls(workers, actors, refs, local)
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                for _ in range(n):
                    i, reader, writer = await _next_connection(arrived, refs, ray)
                    workers[i].reader, workers[i].writer = reader, writer
                for w in workers:
                    assert w.reader is not None
                    ready = await read_frame(w.reader)
                    if ready != b"S":
                        problem = ready[1:].decode(errors="replace")
                        raise LoadgenError(f"worker {w.index} (Ray actor): {problem}")
            await pool.measure_clocks()
        except TimeoutError:
            pool.close()
            msg = f"--ray {address}: the actors did not connect within {START_TIMEOUT_S:g} s"
            raise LoadgenError(msg) from None
        except BaseException:
            pool.close()
            raise
        finally:
            server.close()
        return pool

    def release(self) -> None:
        ray: Any = importlib.import_module("ray")

        with contextlib.suppress(Exception):  # an actor that ended by itself is fine
            ray.wait(self._refs, num_returns=len(self._refs), timeout=5)
        for actor in self._actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        if self._local:
            ray.shutdown()


async def _next_connection(
    arrived: asyncio.Queue[tuple[int, asyncio.StreamReader, asyncio.StreamWriter]],
    refs: list[Any],
    ray: Any,
) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter]:
    """The next actor that connected; an actor that failed first raises its error."""
    while True:
        try:
            async with asyncio.timeout(0.5):
                return await arrived.get()
        except TimeoutError:
            finished, _ = ray.wait(refs, num_returns=1, timeout=0)
            for ref in finished:
                try:
                    ray.get(ref)
                except Exception as exc:
                    raise LoadgenError(f"a Ray actor failed at start: {exc}") from None


def _check_reachable(address: str) -> None:
    """A cluster address must answer a TCP connection within 5 s (LoadgenError if not)."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        msg = f"--ray {address}: expected local, auto, HOST:PORT or ray://HOST:PORT"
        raise ScenarioError(msg)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise LoadgenError(f"--ray {address}: cannot reach {hostport}: {reason}") from None
