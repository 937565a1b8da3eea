"""The media helper process: makes requests' synthetic images and audio on demand.

Run as ``python -m loadgen.execute.media_helper NICE`` by
:class:`loadgen.execute.media_feed.MediaHelper`. Frames on stdin and stdout
are a 4-byte big-endian length and a pickle: first the run's
:class:`~loadgen.workload.media.MediaMaker` in, ``ready`` out; then a
``(draw, index)`` key in, ``(key, media)`` out, in the order asked. The end
of stdin (the run is over, or gone) ends it. It lowers its priority by NICE:
it works ahead, so the sending loop and (on one machine) the server come first.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import sys
from typing import BinaryIO

__all__ = ["HEADER", "HELPER_NICE", "frame", "main"]

HEADER = struct.Struct(">I")
#: the helper's niceness (os.nice): below the sending loop when cores are short
HELPER_NICE = 10


def frame(payload: bytes) -> bytes:
    return HEADER.pack(len(payload)) + payload


def _read(stream: BinaryIO) -> bytes | None:
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (n,) = HEADER.unpack(head)
    body = stream.read(n)
    return body if len(body) == n else None


def main(argv: list[str] | None = None) -> None:
    from loadgen.workload import MediaMaker

    args = sys.argv[1:] if argv is None else argv
    if args and int(args[0]):
        with contextlib.suppress(OSError):
            os.nice(int(args[0]))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    first = _read(stdin)
    if first is None:
        return
    maker = pickle.loads(first)
    assert isinstance(maker, MediaMaker)
    stdout.write(frame(b"ready"))
    stdout.flush()
    while (asked := _read(stdin)) is not None:
        draw, index = pickle.loads(asked)
        media = maker.made(draw, index)
        stdout.write(frame(pickle.dumps(((draw, index), media), protocol=5)))
        stdout.flush()


if __name__ == "__main__":
    main()
