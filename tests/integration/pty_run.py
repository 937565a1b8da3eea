"""Run a command under a pseudo-terminal and read its screen as a person would see it.

The command's stdin, stdout and stderr are the terminal's slave end, sized
``cols`` x ``rows`` (TIOCSWINSZ); every chunk read from the master end is fed
to a pyte terminal emulator, and the screen's text is kept after each chunk:
the frames a person watching would have seen.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
import time
from dataclasses import dataclass

import pyte


@dataclass
class Seen:
    code: int
    frames: list[str]  # the screen's text after each chunk of output
    raw: bytes

    @property
    def last(self) -> str:
        return self.frames[-1] if self.frames else ""


def run_in_pty(
    cmd: list[str],
    *,
    env: dict[str, str],
    cwd: str | None = None,
    cols: int = 100,
    rows: int = 90,
    timeout_s: float = 120.0,
) -> Seen:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(
        cmd, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True
    )
    os.close(slave)
    screen = pyte.Screen(cols, rows)
    stream = pyte.ByteStream(screen)
    frames: list[str] = []
    raw = bytearray()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the slave end has closed it
                break
            if not data:
                break
            raw += data
            stream.feed(data)
            frames.append("\n".join(line.rstrip() for line in screen.display))
        else:
            proc.kill()
        code = proc.wait(timeout=10)
    finally:
        os.close(master)
    return Seen(code, frames, bytes(raw))
