"""loadgen export --parquet / --mlflow and run --mlflow, on a real run of the mock.

One run (two steps against the mock over 127.0.0.1, every fifth request a 500,
a fake-NVML agent and the mock's /metrics as telemetry, a secret header) is
exported once; the Parquet files are read back in pandas and DuckDB (every
query of docs/export.md, compared with summary.json), and the MLflow run in a
folder store and a SQLite store is read back with MlflowClient.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from loadgen.cli import main
from loadgen.export.params import flatten
from loadgen.export.schemas import record_columns
from loadgen.records import read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.summary import Summary
from tests.conftest import spawn_agent, stop_agent
from tests.integration.conftest import make_scenario

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")
duckdb = pytest.importorskip("duckdb")

SECRET = "sk-export-test-7f3a9c"
DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Summary]]:
    """A finished run with errors, GPU, host and server telemetry, and its summary."""
    agent, url = spawn_agent("--fake-nvml", "2", "--interval-ms", "50", "--host-stats")
    try:
        sc = make_scenario(
            name="export-it",
            target={
                "headers": {"Authorization": f"Bearer {SECRET}"},
                "mock": {"args": ["--ttft-ms", "5", "--itl-ms", "8", "--fault", "http500=every:5"]},
                "extra_body": {"ignore_eos": True},
            },
            workload={"output_tokens": {"dist": "fixed", "value": 6}},
            load={
                "concurrency": [1, 4],
                "requests_per_step": 25,
                "warmup_requests": 2,
                "stop_early": None,
            },
            sla={"ttft_ms": {"p50": 1000.0}, "max_error_rate": 0.05},
            telemetry={"agents": [url], "server_metrics": "target", "interval_s": 0.1},
        )
        out = tmp_path_factory.mktemp("export") / "run"
        summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True))
    finally:
        stop_agent(agent)
    yield out, summary


@pytest.fixture(scope="module")
def parquet_dir(results: tuple[Path, Summary]) -> Path:
    out, _ = results
    main(["export", str(out), "--parquet"])  # returns: exit 0
    return out / "parquet"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """main(args): its exit code (0 when it returns), stdout and stderr."""
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# -- Parquet


def test_the_files_have_the_explicit_schemas(
    results: tuple[Path, Summary], parquet_dir: Path
) -> None:
    _, summary = results
    names = {p.name for p in parquet_dir.iterdir()}
    assert names == {
        "records.parquet",
        "steps.parquet",
        "telemetry_gpu.parquet",
        "telemetry_host.parquet",
        "telemetry_server.parquet",
        "telemetry_gaps.parquet",
    }
    schema = pq.read_schema(parquet_dir / "records.parquet")
    assert [(f.name, f.nullable) for f in schema] == [
        (n, t.endswith("?")) for n, t in record_columns()
    ]
    assert schema.field("start_ns").type == pa.int64()
    assert schema.field("first_token_ns").nullable
    assert schema.field("token_ns").type == pa.list_(pa.field("item", pa.int64(), False))
    assert schema.field("ok").type == pa.bool_() and not schema.field("ok").nullable
    assert schema.field("audio_s").type == pa.float64()
    assert schema.field("error_kind").type == pa.string()
    assert schema.metadata[b"loadgen.run_id"].decode() == summary.run_id
    anchor = orjson.loads(schema.metadata[b"loadgen.clock_anchor"])
    assert anchor["wall_ns"] == summary.clock_anchor.wall_ns
    steps = pq.read_schema(parquet_dir / "steps.parquet")
    assert steps.field("errors").type == pa.map_(pa.string(), pa.int64())
    assert steps.field("requests_ok").type == pa.int64()
    assert steps.field("ttft_ms_count").type == pa.int64()
    assert steps.field("ttft_ms_p99").type == pa.float64()
    assert steps.field("client_saturated").type == pa.bool_()
    assert steps.field("started_ns").type == pa.int64()
    gpu = pq.read_schema(parquet_dir / "telemetry_gpu.parquet")
    assert gpu.field("gpu").type == pa.int64()
    assert gpu.field("mem_used_bytes").type == pa.int64()
    assert gpu.field("util_gpu_pct").type == pa.float64()


def test_records_read_back_in_pandas_equal_records_jsonl(
    results: tuple[Path, Summary], parquet_dir: Path
) -> None:
    out, _ = results
    want = list(read_records(out / "records.jsonl"))
    df = pd.read_parquet(parquet_dir / "records.parquet", dtype_backend="pyarrow")
    assert len(df) == len(want) == 54  # 2 steps of 2 warm-up + 25 measured
    assert sum(not r.ok for r in want) > 5  # the faults are there to be counted
    for row, rec in zip(df.to_dict("records"), want, strict=True):
        for name, _ in record_columns():
            got, expected = row[name], getattr(rec, name)
            if name == "token_ns":
                got = list(got)
            elif got is pd.NA:
                got = None
            assert got == expected, (rec.id, name, got, expected)


def test_steps_read_back_in_pandas_equal_steps_csv(
    results: tuple[Path, Summary], parquet_dir: Path
) -> None:
    out, summary = results
    csv = pd.read_csv(out / "steps.csv")
    df = pd.read_parquet(parquet_dir / "steps.parquet")
    assert list(df.columns)[: len(csv.columns)] == list(csv.columns)
    assert list(df.columns)[len(csv.columns) :] == [
        "started_ns",
        "ended_ns",
        "steady_started_ns",
        "steady_ended_ns",
    ]
    for col in csv.columns:
        if col == "errors":
            continue
        a, b = csv[col].tolist(), df[col].tolist()
        if pd.api.types.is_float_dtype(csv[col]):
            assert a == pytest.approx(b, rel=1e-12, nan_ok=True), col
        else:
            assert [None if pd.isna(x) else x for x in a] == [
                None if pd.isna(x) else x for x in b
            ], col
    assert [dict(e) for e in df["errors"]] == [s.requests.errors for s in summary.steps]
    assert df["started_ns"].tolist() == [s.started_ns for s in summary.steps]


def test_telemetry_tables_hold_every_line(results: tuple[Path, Summary], parquet_dir: Path) -> None:
    out, _ = results
    lines = [orjson.loads(x) for x in (out / "telemetry.jsonl").read_bytes().splitlines()]
    for kind, stem in [("gpu", "gpu"), ("host", "host"), ("server", "server"), ("gap", "gaps")]:
        table = pq.read_table(parquet_dir / f"telemetry_{stem}.parquet")
        rows = [x for x in lines if x["type"] == kind]
        assert table.num_rows == len(rows), kind
        if kind in ("gpu", "host", "server"):
            assert rows, f"the run has {kind} telemetry"
            first = table.slice(0, 1).to_pylist()[0]
            assert first["t_ns"] == rows[0]["t_ns"]
    gpu = pq.read_table(parquet_dir / "telemetry_gpu.parquet").to_pylist()
    assert {r["gpu"] for r in gpu} == {0, 1}
    first = next(x for x in lines if x["type"] == "gpu")
    assert gpu[0]["mem_used_bytes"] == first["mem_used_bytes"]
    assert gpu[0]["power_w"] == pytest.approx(first["power_w"])


def doc_queries() -> dict[str, str]:
    """docs/export.md's SQL blocks by the name on their first line (``-- query: NAME``)."""
    blocks = re.findall(r"```sql\n(.*?)```", DOC.read_text(), flags=re.S)
    named = {}
    for block in blocks:
        head = re.match(r"-- query: (\w+)\n", block)
        assert head, block
        named[head.group(1)] = block
    return named


def test_the_docs_duckdb_queries_give_summary_json(
    results: tuple[Path, Summary], parquet_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, summary = results
    monkeypatch.chdir(out)
    queries = doc_queries()
    assert set(queries) == {
        "requests",
        "latency",
        "errors",
        "errors_from_steps",
        "server_per_step",
        "curve",
    }

    def rows(name: str) -> list[tuple[Any, ...]]:
        return duckdb.connect().sql(queries[name]).fetchall()

    steps = summary.steps
    assert rows("requests") == [
        (s.index, s.requests.total, s.requests.ok, s.requests.failed) for s in steps
    ]
    for got, s in zip(rows("latency"), steps, strict=True):
        want = (s.index, s.ttft_ms.p50, s.ttft_ms.p99, s.e2e_ms.p50, s.e2e_ms.p99)
        assert got == pytest.approx(want, rel=1e-9)
    errors = [(s.index, k, n) for s in steps for k, n in sorted(s.requests.errors.items())]
    assert errors and rows("errors") == errors == rows("errors_from_steps")
    for got, s in zip(rows("server_per_step"), steps, strict=True):
        server = s.telemetry.server if s.telemetry is not None else None
        assert server is not None and server.running is not None and server.waiting is not None
        want = (s.index, server.running.mean, server.running.max)
        want += (server.waiting.mean, server.waiting.max)
        assert got == pytest.approx(want, rel=1e-9)
    curve = rows("curve")
    assert [(r[0], r[2], r[5]) for r in curve] == [
        (s.index, float(s.load.concurrency or 0), s.sla.verdict) for s in steps
    ]


def test_a_repeat_folder_is_exported_repeat_by_repeat(
    results: tuple[Path, Summary], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = results
    folder = tmp_path / "repeats"
    for k in (1, 2):
        shutil.copytree(out, folder / f"repeat-{k}", ignore=shutil.ignore_patterns("parquet"))
    code, said, _ = run_cli(
        ["export", str(folder), "--parquet", "--mlflow", str(tmp_path / "m")], capsys
    )
    assert code == 0
    for k in (1, 2):
        assert pq.read_table(folder / "parquet" / f"repeat-{k}" / "records.parquet").num_rows == 54
    assert "(and 2 repeat runs)" in said
    from mlflow.tracking import MlflowClient

    client = MlflowClient(str(tmp_path / "m"))
    exp = client.get_experiment_by_name("export-it")
    runs = client.search_runs([exp.experiment_id])
    parent = next(r for r in runs if "loadgen.repeats" in r.data.tags)
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert sorted(r.info.run_name for r in children) == ["repeat-1", "repeat-2"]
    assert parent.data.params == children[0].data.params


# -- MLflow


@pytest.fixture
def store_uri(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    pytest.importorskip("mlflow")
    monkeypatch.chdir(tmp_path)  # a SQLite store keeps its artifacts in ./mlruns
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    if request.param == "folder":
        return str(tmp_path / "mlruns-store")
    return f"sqlite:///{tmp_path / 'runs.db'}"


@pytest.mark.parametrize("store_uri", ["folder", "sqlite"], indirect=True)
def test_an_exported_run_reads_back_from_the_store(
    results: tuple[Path, Summary], store_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow.tracking import MlflowClient

    out, summary = results
    code, said, _ = run_cli(["export", str(out), f"--mlflow={store_uri}"], capsys)
    assert code == 0 and said.startswith("mlflow: run ")
    client = MlflowClient(store_uri)
    exp = client.get_experiment_by_name("export-it")
    (run,) = client.search_runs([exp.experiment_id])
    assert run.info.run_name == out.name and run.info.status == "FINISHED"
    # parameters: the flattened scenario, no secret
    scenario = yaml.safe_load((out / "scenario.yaml").read_text())
    assert run.data.params == flatten(scenario)
    assert run.data.params["load.concurrency"] == "[1,4]"
    assert run.data.params["workload.output_tokens.value"] == "6"
    assert run.data.params["target.headers.Authorization"] == "<redacted>"
    assert not any(SECRET in v for v in run.data.params.values())
    # metrics: one point per step, the step index as the step
    rid = run.info.run_id
    for name, value in [
        ("ttft_ms_p99", lambda s: s.ttft_ms.p99),
        ("e2e_ms_p50", lambda s: s.e2e_ms.p50),
        ("output_tokens_per_s", lambda s: s.throughput.output_tokens_per_s),
        ("requests_failed", lambda s: s.requests.failed),
        ("load_value", lambda s: s.load.concurrency),
    ]:
        history = sorted(client.get_metric_history(rid, name), key=lambda m: m.step)
        assert [(m.step, m.value) for m in history] == [
            (s.index, pytest.approx(value(s), rel=1e-12)) for s in summary.steps
        ], name
    # tags: the verdict per step and overall
    tags = run.data.tags
    verdicts = [s.sla.verdict for s in summary.steps]
    assert [tags[f"loadgen.step.{i}.verdict"] for i in range(2)] == verdicts
    assert tags["loadgen.verdict"] == (
        "missed" if "missed" in verdicts else tags["loadgen.verdict"]
    )
    assert "missed" in verdicts  # 20% errors against max_error_rate 0.05
    assert tags["loadgen.step.1.load"] == "concurrency 4"
    assert tags["loadgen.run_id"] == summary.run_id
    assert summary.verdict is not None and summary.verdict.text
    assert tags["loadgen.verdict_text"] == summary.verdict.text
    # artifacts
    listed = {a.path for a in client.list_artifacts(rid)}
    assert {"summary.json", "scenario.yaml", "steps.csv", "report.md", "report.html"} <= listed
    assert "plots" in listed and "parquet" in listed
    plots = {a.path for a in client.list_artifacts(rid, "plots")}
    assert "plots/latency_throughput.png" in plots


def test_run_mlflow_logs_a_run_that_misses_and_keeps_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: run-mlflow\n"
        "target: {url: mock, model: m, mock: {args: [--ttft-ms, '20', --itl-ms, '8']}}\n"
        "workload: {prompt_tokens: {dist: fixed, value: 8},"
        " output_tokens: {dist: fixed, value: 4}}\n"
        "load: {mode: concurrency, concurrency: [1], requests_per_step: 4}\n"
        "sla: {max_error_rate: 0.0, ttft_ms: {mean: 1.0}}\n"
    )
    uri = f"sqlite:///{tmp_path / 'r.db'}"
    out = tmp_path / "res"
    code, said, _ = run_cli(
        ["run", str(path), "--out", str(out), "-q", "--fail-on-sla", f"--mlflow={uri}"], capsys
    )
    assert code == 1  # the SLA missed: the run's own exit code
    assert "mlflow: run " in said
    client = MlflowClient(uri)
    (run,) = client.search_runs([client.get_experiment_by_name("run-mlflow").experiment_id])
    assert run.data.tags["loadgen.verdict"] == "missed"
    assert run.data.tags["loadgen.results_dir"] == str(out.resolve())
    # the folder now holds a run: a second run there is refused, and nothing is logged for it
    code, _, err = run_cli(["run", str(path), "--out", str(out), "-q", f"--mlflow={uri}"], capsys)
    assert code == 2 and "--replace" in err
    assert len(client.search_runs([run.info.experiment_id])) == 1


@pytest.mark.parametrize(
    ("args", "module", "extra"),
    [
        (["export", "{dir}", "--parquet"], "pyarrow", "parquet"),
        (["export", "{dir}", "--mlflow"], "mlflow", "mlflow"),
        (["run", "{scenario}", "--out", "{dir}/new", "--mlflow"], "mlflow", "mlflow"),
    ],
)
def test_a_missing_extra_is_one_line_and_exit_2(
    results: tuple[Path, Summary],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    module: str,
    extra: str,
) -> None:
    out, _ = results
    scenario = tmp_path / "s.yaml"
    shutil.copy(out / "scenario.yaml", scenario)
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    argv = [a.format(dir=out, scenario=scenario) for a in args]
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"loadgen: --{'parquet' if extra == 'parquet' else 'mlflow'} needs the {extra} extra "
        f"({module}): pip install 'loadgen[{extra}]'"
    ]
    assert not (out / "new").exists()  # run: refused before anything ran
