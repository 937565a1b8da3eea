"""The one state of an h1 connection, and every move it makes between states.

Owns :class:`State` (a connection's life: a request goes out, its answer's
head comes, perhaps after 1xx answers, then its body; then the pool, a drain
of a body the caller left unread, or the close), :class:`Event` and
``TRANSITIONS``. The connection (``exchange.Core``, ``connection.Conn``)
owns the value and moves it only through :func:`advance`; the answer
(``answer.Exchange``) reads it.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["TRANSITIONS", "Event", "State", "advance"]


class State(IntEnum):
    """Where a connection is; in this order, so ``< BODY`` is "the head is not in"."""

    NEW = 0  # connected, nothing sent
    HEAD = 1  # a request is out (or going out); its answer's head is not in
    INTERIM = 2  # inside a 1xx answer (100 Continue, 103 Early Hints): the real one follows
    BODY = 3  # the head is in; the body is coming
    DONE = 4  # the answer is complete; the caller may still be reading it
    DRAINING = 5  # the caller let go before the end: the rest is read to reuse the connection
    IDLE = 6  # in the pool, waiting for a request
    CLOSED = 7  # gone; an answer it had was complete, or failed (the exchange's error says)
    CLOSED_IN_BODY = 8  # gone mid-body: the head is in, the body ends in the exchange's error


class Event(IntEnum):
    """What happens to a connection (each moves it as ``TRANSITIONS`` says)."""

    SEND = 0  # a request goes out
    INTERIM = 1  # the head of a 1xx answer
    HEAD = 2  # the head of the answer
    END = 3  # the end of an answer (1xx, or the real one: framed, or by the server's close)
    LET_GO = 4  # the caller let go of a framed body it did not read to the end
    POOL = 5  # the connection goes back to the pool
    CLOSE = 6


_S, _E = State, Event
#: Every move a connection makes; anything else is a bug, and raises.
TRANSITIONS: dict[tuple[State, Event], State] = {
    (_S.NEW, _E.SEND): _S.HEAD,
    (_S.IDLE, _E.SEND): _S.HEAD,
    (_S.HEAD, _E.INTERIM): _S.INTERIM,
    (_S.INTERIM, _E.END): _S.HEAD,
    (_S.HEAD, _E.HEAD): _S.BODY,
    (_S.BODY, _E.END): _S.DONE,
    (_S.BODY, _E.LET_GO): _S.DRAINING,
    (_S.DRAINING, _E.END): _S.DONE,
    (_S.DONE, _E.POOL): _S.IDLE,
    **{(s, _E.CLOSE): _S.CLOSED for s in State if s < _S.CLOSED and s is not _S.BODY},
    (_S.BODY, _E.CLOSE): _S.CLOSED_IN_BODY,
}


def advance(state: State, event: Event) -> State:
    """The state ``event`` moves a connection in ``state`` to."""
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise RuntimeError(f"h1 connection: no {event.name} in {state.name}") from None
