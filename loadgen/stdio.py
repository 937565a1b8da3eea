"""stdout and stderr that outlive their reader: a closed pipe or a hung-up terminal drops output.

``loadgen run ... | head -1`` closes the pipe after one line; a closed
terminal or a dropped SSH session turns every later write into EIO. Either
way the run must go on writing its files, so :func:`tolerant_stdio` puts
stdout and stderr on file objects whose writes, once the reader is gone,
are dropped instead of raised (the lowest layer: every ``print`` and
``click.echo`` above it is covered).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = ["GONE_ERRNOS", "TolerantRaw", "tolerant_stdio"]

#: what a write to a stream whose reader has gone fails with
GONE_ERRNOS = frozenset({errno.EPIPE, errno.EIO, errno.ECONNRESET})


class TolerantRaw(io.RawIOBase):
    """Writes to file descriptor ``fd``; once the reader is gone, later writes are dropped."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        #: the reader went away: nothing more is written
        self.gone = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return not self.gone and os.isatty(self.fd)

    def write(self, data: ReadableBuffer) -> int:
        size = memoryview(data).nbytes
        if self.gone:
            return size
        try:
            return os.write(self.fd, data)
        except OSError as exc:
            if exc.errno not in GONE_ERRNOS:
                raise
            self.gone = True
            return size

    def close(self) -> None:  # the descriptor is the process's: never closed here
        super().close()


def _wrap(stream: TextIO) -> TextIO:
    stream.flush()
    raw = TolerantRaw(stream.fileno())
    return io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=bool(stream.line_buffering),
    )


@contextlib.contextmanager
def tolerant_stdio() -> Iterator[None]:
    """While inside, ``sys.stdout`` and ``sys.stderr`` drop output their reader cannot take.

    Only the process's own streams are replaced (not a test's capture); they
    are flushed and put back on the way out.
    """
    swapped: list[tuple[str, TextIO]] = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or stream is not getattr(sys, f"__{name}__"):
            continue
        try:
            stream.fileno()
        except (OSError, ValueError):
            continue
        setattr(sys, name, _wrap(stream))
        swapped.append((name, stream))
    try:
        yield
    finally:
        for name, original in swapped:
            wrapper = getattr(sys, name)
            with contextlib.suppress(OSError, ValueError):
                wrapper.flush()
            setattr(sys, name, original)
