"""What choosing an endpoint costs per request: Router.pick + release, per policy.

Pure bookkeeping on the client's hot path (loadgen.client.routing), so it
should be far below a request's own client cost (several microseconds: see
client_throughput.py). Prints nanoseconds per pick+release for each policy
and endpoint count. A single endpoint has no router at all.

    python benchmarks/routing_overhead.py [--n 1000000]
"""

from __future__ import annotations

import argparse
import time

from loadgen.client.routing import POLICIES, Router


def per_request_ns(policy: str, endpoints: int, n: int) -> float:
    router = Router(endpoints, policy)
    pick, release = router.pick, router.release
    t0 = time.perf_counter_ns()
    for i in range(n):
        # sessions of 4 turns, as a multi-turn workload sends them
        release(pick(i >> 2))
    return (time.perf_counter_ns() - t0) / n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000, help="picks per case")
    args = p.parse_args()
    print(f"{'policy':<16}{'endpoints':>10}{'ns/request':>12}")
    for policy in POLICIES:
        for endpoints in (2, 8, 64):
            ns = per_request_ns(policy, endpoints, args.n)
            print(f"{policy:<16}{endpoints:>10}{ns:>12.0f}")


if __name__ == "__main__":
    main()
