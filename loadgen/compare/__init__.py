"""Comparing runs: what ``loadgen compare`` and ``loadgen run --repeat`` decide.

Owns the runs read back from their results directories (``runs``), whether
their workloads may be compared at all (``workloads``), their steps matched
by load (``match``), the regression gate's expression and rule (``gate``)
with its request bootstrap (``resample``), the gate run over the matched
steps (``regression``), the run-to-run spread of repeats (``repeats``), and
what is decided differently for pooling runs (``pooling``). It decides; the
report renders what it decided (tables, overlays, comparison.md) and never
judges a regression itself.
"""
