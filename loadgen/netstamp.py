"""Kernel receive and transmit stamps: asking for them, reading them, and turning them into
monotonic time.

Owns the ``SO_TIMESTAMPNS`` socket option, the control-message buffer a
``recvmsg`` needs for it, the parsing of the stamp it brings, and
:class:`WallOffset`, which turns such a stamp (CLOCK_REALTIME, as the kernel
gives it) into the monotonic clock latency is measured in. The client's h1
connections (through ``loadgen.clock``) and the mock's sockets
(``loadgen.mock.sock``) both use it, which is why it stands apart from both.

It reads no clock itself: a :class:`WallOffset` is given the two clocks to
read by its owner. For the load generator that is ``loadgen.clock`` (the one
owner of time there); the mock, which stands alone, passes its own.

Transmit stamps (``SO_TIMESTAMPING``, Linux): :func:`tx_arm` asks the kernel
to stamp a socket's sends (``SOF_TIMESTAMPING_TX_SOFTWARE``: when a send's last
byte was handed to the device; ``TX_ACK``: when the peer acknowledged it),
each keyed by its last byte's offset from the arming (``OPT_ID``, with
``OPT_ID_TCP`` where the kernel has it), stamps only (``OPT_TSONLY``: no copy of
the data); :func:`tx_stamps` reads them from the socket's error queue
(``MSG_ERRQUEUE``: a ``SCM_TIMESTAMPING`` message of three timespecs, the first
the software stamp, and a ``sock_extended_err`` naming the kind and the key).
See the kernel's Documentation/networking/timestamping.rst.
"""

from __future__ import annotations

import socket
import struct
import sys
from collections.abc import Callable

__all__ = [
    "ANC_SIZE",
    "MAX_AGE_NS",
    "SO_TIMESTAMPNS",
    "TOLERANCE_NS",
    "TX_ACK",
    "TX_SENT",
    "WallOffset",
    "enable",
    "kernel_ns",
    "tx_arm",
    "tx_disarm",
    "tx_stamps",
]

#: The socket module names it only from Python 3.14 on; 35 is Linux's value (and
#: means something else elsewhere, so it is not guessed there).
SO_TIMESTAMPNS: int | None = getattr(
    socket, "SO_TIMESTAMPNS", 35 if sys.platform.startswith("linux") else None
)
_TIMESPEC = struct.Struct("@qq")  # struct timespec: seconds, nanoseconds
#: The ancillary buffer ``recvmsg`` needs for one stamp.
ANC_SIZE = socket.CMSG_SPACE(_TIMESPEC.size)

#: A kernel stamp further back than this is taken to straddle a step of the
#: wall clock (settimeofday, an NTP step) and is not trusted.
MAX_AGE_NS = 10_000_000_000
#: The wall-minus-monotonic offset is measured again when a quick reading
#: differs from the kept one by more than this.
TOLERANCE_NS = 50_000


def enable(sock: socket.socket) -> bool:
    """Ask the kernel to stamp ``sock``'s reads; False where it cannot (then stamp reads when
    made)."""
    if SO_TIMESTAMPNS is None:
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


def kernel_ns(anc: list[tuple[int, int, bytes]]) -> int | None:
    """The receive stamp in a ``recvmsg``'s ancillary data (CLOCK_REALTIME ns), or None."""
    if anc and len(anc[0][2]) == _TIMESPEC.size:
        sec, nsec = _TIMESPEC.unpack(anc[0][2])
        return int(sec * 1_000_000_000 + nsec)
    return None


class WallOffset:
    """Wall minus monotonic clock, for turning kernel stamps into monotonic ns.

    The offset changes only when the wall clock is stepped (slewing moves both
    clocks alike), so it is measured carefully once (the tightest of five
    bracketed reads) and checked at each conversion with one quick reading,
    which a step would move by more than ``TOLERANCE_NS``. ``monotonic`` and
    ``wall`` read the two clocks (integer ns); the owner of time passes them.
    """

    __slots__ = ("_mono", "_wall", "value")

    def __init__(self, monotonic: Callable[[], int], wall: Callable[[], int]) -> None:
        self._mono = monotonic
        self._wall = wall
        self.value = self.measure()

    def measure(self, tries: int = 5) -> int:
        """Wall minus monotonic, from the tightest of ``tries`` bracketed reads."""
        mono, wall = self._mono, self._wall
        best_gap, offset = -1, 0
        for _ in range(tries):
            before = mono()
            at = wall()
            after = mono()
            if best_gap < 0 or after - before < best_gap:
                best_gap, offset = after - before, at - (before + after) // 2
        return offset

    def to_monotonic(self, realtime_ns: int, now: int) -> int:
        """A kernel stamp (CLOCK_REALTIME ns) as monotonic ns; ``now`` is the monotonic clock
        just read.

        A stamp that would lie in the future, or further back than
        ``MAX_AGE_NS``, means the wall clock was stepped in between: ``now`` is
        returned.
        """
        if abs(self._wall() - now - self.value) > TOLERANCE_NS:
            self.value = self.measure()
        stamp = realtime_ns - self.value
        if stamp > now or now - stamp > MAX_AGE_NS:
            return now
        return stamp


# -- transmit stamps (Linux) ------------------------------------------------------------------

_LINUX = sys.platform.startswith("linux")
_SO_TIMESTAMPING = 37  # SO_TIMESTAMPING_OLD: 64-bit timespecs on 64-bit Linux
_TX_SOFTWARE, _SOFTWARE, _OPT_ID = 1 << 1, 1 << 4, 1 << 7
_TX_ACK, _OPT_TSONLY, _OPT_ID_TCP = 1 << 9, 1 << 11, 1 << 16
_TX_FLAGS = _SOFTWARE | _OPT_ID | _OPT_TSONLY
#: a stamp's kind (sock_extended_err.ee_info): SCM_TSTAMP_SND, SCM_TSTAMP_ACK
TX_SENT, TX_ACK = 0, 2
_EXT_ERR = struct.Struct("=IBBBBII")  # struct sock_extended_err
_ORIGIN_TIMESTAMPING = 4  # SO_EE_ORIGIN_TIMESTAMPING
_RECVERR = {(socket.IPPROTO_IP, 11), (socket.IPPROTO_IPV6, 25)}  # IP_RECVERR, IPV6_RECVERR
_ERRQUEUE_ANC = 512


def tx_arm(sock: socket.socket, kind: int = TX_SENT) -> bool:
    """Stamp ``sock``'s sends from now on with stamps of ``kind`` (TX_SENT or TX_ACK),
    keyed from 0 at the next byte written; False where the kernel cannot (not Linux,
    an old kernel, not TCP)."""
    if not _LINUX:
        return False
    wanted = _TX_FLAGS | (_TX_ACK if kind == TX_ACK else _TX_SOFTWARE)
    for flags in (wanted | _OPT_ID_TCP, wanted):  # OPT_ID_TCP: Linux 6.2 on
        try:
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPING, flags)
        except OSError:
            continue
        return True
    return False


def tx_disarm(sock: socket.socket) -> None:
    """No more stamps of ``sock``'s sends (and none left queued)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPING, 0)
    except OSError:
        return
    tx_stamps(sock)


def tx_stamps(sock: socket.socket) -> list[tuple[int, int, int]]:
    """Every transmit stamp queued on ``sock``, as (kind, key, CLOCK_REALTIME ns): ``kind``
    TX_SENT or TX_ACK, ``key`` the offset of the stamped send's last byte."""
    out: list[tuple[int, int, int]] = []
    while True:
        try:
            _, anc, _, _ = sock.recvmsg(0, _ERRQUEUE_ANC, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return out
        except OSError:
            return out
        wall = kind = key = None
        for level, kind_of, data in anc:
            if level == socket.SOL_SOCKET and kind_of == _SO_TIMESTAMPING:
                if len(data) >= _TIMESPEC.size:
                    sec, nsec = _TIMESPEC.unpack_from(data)  # [0]: the software stamp
                    wall = sec * 1_000_000_000 + nsec
            elif (level, kind_of) in _RECVERR and len(data) >= _EXT_ERR.size:
                _, origin, _, _, _, info, ident = _EXT_ERR.unpack_from(data)
                if origin == _ORIGIN_TIMESTAMPING:
                    kind, key = info, ident
        if wall and kind is not None and key is not None:
            out.append((kind, key, wall))
