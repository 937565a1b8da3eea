"""A telemetry source's answer that came back but says no: not 2xx.

Owns :class:`SourceStatus` (its ``str()`` is the gap line: ``answered HTTP
401``) and :func:`ok_reply`, shared by the agent polls, the server and
dcgm-exporter scrapes.
"""

from __future__ import annotations

from loadgen.control import Reply

__all__ = ["SourceStatus", "ok_reply"]


class SourceStatus(Exception):
    """A source answered, but not 2xx (a wrong token: 401), or not with what it serves."""


def ok_reply(reply: Reply) -> Reply:
    """``reply`` if its status is 2xx; :class:`SourceStatus` naming the status otherwise."""
    if not 200 <= reply.status < 300:
        raise SourceStatus(f"answered HTTP {reply.status}")
    return reply
