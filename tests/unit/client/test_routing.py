"""The routing policies of target.routing: the split, the least loaded, session affinity."""

from __future__ import annotations

from collections import Counter

import pytest

from loadgen.client.routing import POLICIES, Router
from loadgen.scenario.target_spec import ROUTING_POLICIES


def test_the_scenario_offers_exactly_the_routers_policies() -> None:
    assert ROUTING_POLICIES == POLICIES


@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize("requests", [1, 7, 100, 101])
def test_round_robin_splits_within_one_request(n: int, requests: int) -> None:
    router = Router(n, "round_robin")
    picks = Counter(router.pick() for _ in range(requests))
    counts = [picks[i] for i in range(n)]
    assert sum(counts) == requests
    assert max(counts) - min(counts) <= 1
    assert router.sent == counts


def test_round_robin_takes_endpoints_in_turn_whatever_is_in_flight() -> None:
    router = Router(3)
    assert [router.pick() for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert router.in_flight == [3, 2, 2]


def test_least_in_flight_picks_the_least_loaded() -> None:
    router = Router(3, "least_in_flight")
    assert [router.pick() for _ in range(4)] == [0, 1, 2, 0]  # ties go in turn
    assert router.in_flight == [2, 1, 1]
    router.release(1)
    assert router.pick() == 1  # the only one with none... then [2, 1, 1]
    router.release(2)
    router.release(0)
    router.release(0)
    assert router.in_flight == [0, 1, 0]
    assert router.pick() == 2  # 0 and 2 tie at zero; the pointer stands after 1
    assert router.pick() == 0
    assert router.in_flight == [1, 1, 1]


def test_least_in_flight_keeps_a_slow_endpoint_from_piling_up() -> None:
    """Endpoint 0 never finishes; endpoint 1 finishes at once: new requests go to 1."""
    router = Router(2, "least_in_flight")
    first = router.pick()
    assert first == 0
    for _ in range(10):
        i = router.pick()
        assert i == 1
        router.release(i)
    assert router.in_flight == [1, 0]
    assert router.sent == [1, 10]


def test_least_in_flight_ties_still_take_turns() -> None:
    router = Router(3, "least_in_flight")
    picks = []
    for _ in range(9):
        i = router.pick()
        picks.append(i)
        router.release(i)  # always a tie at zero
    assert picks == [0, 1, 2] * 3


def test_session_affinity_keeps_every_turn_on_one_endpoint() -> None:
    router = Router(3, "session")
    where: dict[int, int] = {}
    for _turn in range(4):
        for session in range(6):  # turns of six sessions interleaved
            i = router.pick(session)
            assert where.setdefault(session, i) == i
            router.release(i)
    # first turns go round robin: six sessions over three endpoints, two each
    assert Counter(where.values()) == {0: 2, 1: 2, 2: 2}


def test_session_affinity_keeps_no_state_per_session() -> None:
    """A long step runs endless sessions: the router must not remember each one."""
    router = Router(2, "session")
    assert [router.pick(s) for s in (0, 1, 2, 3, 10**9 + 1)] == [0, 1, 0, 1, 1]
    assert not hasattr(router, "__dict__")  # slotted: nothing can pile up per session


def test_session_without_sessions_is_round_robin() -> None:
    router = Router(2, "session")
    assert [router.pick() for _ in range(5)] == [0, 1, 0, 1, 0]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one endpoint"):
        Router(0)
    with pytest.raises(ValueError, match="expected one of round_robin"):
        Router(2, "random")


def test_round_robin_can_start_elsewhere() -> None:
    """Worker k of a step starts at endpoint k: the workers' odd requests spread out."""
    assert [Router(3, first=1).pick() for _ in range(1)] == [1]
    router = Router(3, first=4)
    assert [router.pick() for _ in range(4)] == [1, 2, 0, 1]
    w0, w1 = Router(2, first=0), Router(2, first=1)
    picks = Counter([w0.pick() for _ in range(5)] + [w1.pick() for _ in range(5)])
    assert picks == {0: 5, 1: 5}  # each worker's odd request on a different endpoint
