"""The live run and the rebuild of a killed run assemble a step's summary the same way.

Both call :func:`loadgen.results.assemble.step_summary` on the step's
columns, so a summary rebuilt from records.jsonl and scenario.yaml must carry
the same measured figures as the one the run wrote; only what the live run
alone sees (client health, in-flight samples, the pre-flight check, the
workload description, the clock anchor) may differ.
"""

from __future__ import annotations

from pathlib import Path

from loadgen.results.rebuild import can_rebuild, rebuild_summary
from tests.integration.conftest import Runner, make_scenario

#: what only the live run can know, left out of the comparison
LIVE_ONLY = {
    "client",
    "little",
    "telemetry",
    "prefix_cache",
    "interrupted",
    "spec_decode",
    "time_split",
}


def test_a_rebuilt_summary_carries_the_live_run_s_figures(run: Runner) -> None:
    sc = make_scenario(
        target={"mock": {"args": ["--ttft-ms", "5", "--itl-ms", "1"]}},
        load={"mode": "concurrency", "concurrency": [1, 3], "requests_per_step": 12},
        sla={"ttft_ms": {"p50": 400}, "max_error_rate": 0.01},  # 12 requests decide a p50
        cost={"usd_per_hour": 2.0},
    )
    live, _, out = run(sc)
    assert [s.requests.ok for s in live.steps] == [12, 12]
    (out / "summary.json").unlink()
    assert can_rebuild(out)
    rebuilt = rebuild_summary(Path(out))
    assert rebuilt.interrupted and not live.interrupted
    assert (rebuilt.name, rebuilt.api, rebuilt.model, rebuilt.sla) == (
        live.name,
        live.api,
        live.model,
        live.sla,
    )
    assert rebuilt.run_id == live.run_id  # read back from the request ids
    assert len(rebuilt.steps) == len(live.steps)
    for a, b in zip(rebuilt.steps, live.steps, strict=True):
        mine = a.model_dump(exclude=LIVE_ONLY)
        theirs = b.model_dump(exclude=LIVE_ONLY)
        assert mine.keys() == theirs.keys()
        differing = {k for k in mine if mine[k] != theirs[k]}
        assert not differing, differing
        assert a.cost is not None and a.cost == b.cost
    # the rebuild marks its last step interrupted (it cannot know the step ended), so the
    # verdict is over the steps before it: here the first, which met the SLA
    assert rebuilt.steps[-1].interrupted and not any(s.interrupted for s in live.steps)
    assert live.steps[0].sla.verdict == "met"
    assert rebuilt.verdict is not None and rebuilt.verdict.max_passing == 1
