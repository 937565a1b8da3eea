"""docs/prometheus.md documents every metric the exporter serves: name, type, labels, buckets."""

from __future__ import annotations

import re
from pathlib import Path

from loadgen.prom_endpoint import METRICS

DOC = (Path(__file__).parents[3] / "docs" / "prometheus.md").read_text()


def rows() -> dict[str, tuple[str, str]]:
    """name -> (type, labels cell) of the doc's metrics table."""
    out = {}
    for line in DOC.splitlines():
        m = re.match(r"\| `(loadgen_[a-z0-9_]+)` \| (\w+) \| ([^|]*) \|", line)
        if m:
            out[m[1]] = (m[2], m[3].strip())
    return out


def test_every_metric_is_in_the_table_with_its_type_and_labels() -> None:
    table = rows()
    assert set(table) == set(METRICS)
    for name, m in METRICS.items():
        kind, labels = table[name]
        assert kind == m.kind, name
        assert labels == (", ".join(f"`{x}`" for x in m.labels) or "—"), name


def test_the_buckets_listed_are_the_codes() -> None:
    def listed(prefix: str) -> tuple[float, ...]:
        (line,) = [x for x in DOC.splitlines() if x.startswith(f"- {prefix}: ")]
        return tuple(float(v) for v in line.split(": ", 1)[1].split(", "))

    assert listed("TTFT") == METRICS["loadgen_ttft_seconds"].buckets
    assert listed("ITL and TPOT") == METRICS["loadgen_itl_seconds"].buckets
    assert listed("ITL and TPOT") == METRICS["loadgen_tpot_seconds"].buckets
    assert listed("E2E") == METRICS["loadgen_e2e_seconds"].buckets
    assert listed("queue wait and send lag") == METRICS["loadgen_queue_wait_seconds"].buckets
    assert listed("queue wait and send lag") == METRICS["loadgen_send_lag_seconds"].buckets
