"""How late this machine wakes a sleeping process: the floor under any timing test.

Sleeps ``--ms`` milliseconds ``--count`` times and prints how far past the
deadline each wake-up came (percentiles, in microseconds). On a VM an idle
vCPU may be descheduled, and two processes that time each other (loadgen and a
server) each pay this.

    python benchmarks/wakeup_jitter.py [--count 2000] [--ms 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--ms", type=float, default=2.0)
    args = ap.parse_args()
    want_ns = int(args.ms * 1e6)
    late = np.empty(args.count)
    for i in range(args.count):
        t = time.perf_counter_ns()
        time.sleep(args.ms / 1e3)
        late[i] = (time.perf_counter_ns() - t - want_ns) / 1e3
    pct = np.percentile(late, [50, 90, 99, 99.9, 100])
    print(f"time.sleep({args.ms:g} ms) x {args.count}: wake-up lateness in microseconds")
    print("  p50 {:.0f}  p90 {:.0f}  p99 {:.0f}  p99.9 {:.0f}  max {:.0f}".format(*pct))


if __name__ == "__main__":
    main()
