"""telemetry.jsonl as the collector writes it: one JSON object a line.

Owns :class:`LineFile`. A URL password never reaches the file (each line
passes :func:`loadgen.redact.redact_text` when a source URL holds userinfo);
a write the disk refuses stops the file, said once, and the run goes on.
Lines may come from the collector's thread and the runner's (a step's
Prometheus queries): each is one ``write`` of a buffered file, whole.
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
from typing import IO

import orjson

from loadgen.redact import redact_text

__all__ = ["LineFile"]

log = logging.getLogger("loadgen.telemetry")


class LineFile:
    """One telemetry.jsonl; nothing is written before :meth:`open` or after :meth:`close`."""

    def __init__(self, path: pathlib.Path, redact: bool) -> None:
        self.path = pathlib.Path(path)
        self._redact = redact
        self._file: IO[bytes] | None = None

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb")

    def write(self, line: dict[str, object]) -> None:
        if self._file is None or self._file.closed:
            return
        data = orjson.dumps(line)
        if self._redact:  # a URL password never reaches telemetry.jsonl
            data = redact_text(data.decode()).encode()
        try:
            self._file.write(data + b"\n")
        except OSError as exc:  # disk full: telemetry stops, the run goes on
            log.warning(
                "%s: cannot write: %s; telemetry after this point is lost",
                self.path,
                exc.strerror or exc,
            )
            self.close()

    def flush(self) -> None:
        if self._file is not None and not self._file.closed:
            try:
                self._file.flush()
            except OSError:  # said by the next write, or lost with the file
                self.close()

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):  # a refused flush was said in write
                self._file.close()
