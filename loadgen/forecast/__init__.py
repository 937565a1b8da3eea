"""What a planned sweep can decide, and about how long it takes: before anything is sent.

Owns ``loadgen workload``'s forecast: per step, the percentile bounds its
request count cannot confirm at the scenario's confidence, and the requests
that could (:mod:`~loadgen.forecast.decide`, from
:func:`loadgen.metrics.confidence.requests_needed`); each step's estimated
length and, where a duration bounds it, its request count
(:mod:`~loadgen.forecast.timing`: the mock's timing model for ``url: mock``,
else the SLA bounds); the whole sweep and its lines
(:mod:`~loadgen.forecast.sweep`).

May import: loadgen.scenario, loadgen.workload (the plans), loadgen.metrics
(only confidence), loadgen.target (only the mock's arguments), loadgen.mock
(only its config and timing model), loadgen.vocab. Sends nothing, reads no clock.

Public names: Forecast, StepForecast, StepEstimate, StepShape, Shortfall,
forecast, forecast_report, fewest_to_confirm, shortfalls, step_shape,
from_bounds, on_mock.
"""

from loadgen.forecast.decide import Shortfall, fewest_to_confirm, shortfalls
from loadgen.forecast.sweep import Forecast, StepForecast, forecast, forecast_report, step_shape
from loadgen.forecast.timing import StepEstimate, StepShape, from_bounds, on_mock

__all__ = [
    "Forecast",
    "Shortfall",
    "StepEstimate",
    "StepForecast",
    "StepShape",
    "fewest_to_confirm",
    "forecast",
    "forecast_report",
    "from_bounds",
    "on_mock",
    "shortfalls",
    "step_shape",
]
