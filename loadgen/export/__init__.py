"""A results directory into the stores people query: typed Parquet files, an MLflow run.

Owns ``loadgen export DIR --parquet`` (:mod:`~loadgen.export.parquet`, the
schemas in :mod:`~loadgen.export.schemas`), the MLflow run that ``loadgen run
--mlflow`` and ``loadgen export DIR --mlflow`` make (:mod:`~loadgen.export.mlflow_log`,
the scenario flattened into parameters by :mod:`~loadgen.export.params`) and
the one line a missing extra is (:mod:`~loadgen.export.extras`). Everything is
read from the files a run wrote, after the run: nothing here is on the load path.

pyarrow (``loadgen[parquet]``) and mlflow (``loadgen[mlflow]``) are optional and
imported only inside the functions that use them.

May import: loadgen.errors, records (streamed), redact, summary, report (the
summary reader, steps.csv's rows, the repeats' folders). Never a stage that
sends load.
"""

from loadgen.export.extras import need
from loadgen.export.mlflow_log import Tracker, open_tracking
from loadgen.export.parquet import repeat_folders, write_parquet

__all__ = [
    "Tracker",
    "need",
    "open_tracking",
    "repeat_folders",
    "write_parquet",
]
