"""Writes to a reader that has gone are dropped, not raised (``loadgen run ... | head -1``)."""

from __future__ import annotations

import io
import os

from loadgen.stdio import TolerantRaw


def test_a_closed_pipe_drops_output_instead_of_raising() -> None:
    """Probe: ``| head -1`` closed the pipe; the next print raised BrokenPipeError and
    click ended the run with exit 1 before its reports were written."""
    r, w = os.pipe()
    try:
        raw = TolerantRaw(w)
        out = io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8")
        out.write("first line\n")
        out.flush()
        assert os.read(r, 100) == b"first line\n"
        os.close(r)
        out.write("x" * 100_000 + "\n")  # EPIPE underneath
        out.flush()
        assert raw.gone and not raw.isatty()
        out.write("more\n")
        out.flush()
    finally:
        os.close(w)
