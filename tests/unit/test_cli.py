"""The CLI's one error tree, its exit codes, what a run amounts to, and --help.

Every user-facing failure is a LoadgenError subclass whose class carries its
exit code (defined once, in errors.py, which draws the tree); the CLI exits
with that code, and what a run amounts to is judged in loadgen.results.outcome.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import loadgen.errors as errors_module
from loadgen.cli import cli, main
from loadgen.errors import (
    Inconclusive,
    Interrupted,
    LoadgenError,
    OutputError,
    Regression,
    ScenarioError,
    SlaMissed,
    TargetError,
    TargetUnusable,
)
from loadgen.metrics.sla import decide
from loadgen.results.outcome import judge
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import parse_scenario
from loadgen.summary import (
    ClockAnchor,
    LoadPoint,
    RequestCounts,
    SlaCheck,
    SlaResult,
    StepSummary,
    Summary,
)

SCENARIO = """
name: t
target: {url: "http://127.0.0.1:9", model: m}
load: {mode: concurrency, concurrency: [1], requests_per_step: 2}
"""


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def help_text(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """--help output (click returns, argparse exits 0)."""
    try:
        main(args)
    except SystemExit as exc:
        assert not exc.code
    return capsys.readouterr().out


def every_error_class() -> list[type[LoadgenError]]:
    return [
        c
        for _, c in inspect.getmembers(errors_module, inspect.isclass)
        if issubclass(c, LoadgenError)
    ]


@pytest.mark.parametrize("cls", every_error_class())
def test_the_cli_exits_with_the_code_the_error_class_carries(
    cls: type[LoadgenError], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(ctx: object, *args: object, **kwargs: object) -> None:
        raise cls("planted")

    monkeypatch.setattr(cli, "invoke", fail)
    code, _, err = run_cli(["workload", "x.yaml"], capsys)
    assert code == cls.exit_code
    assert err == "loadgen: planted\n"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ScenarioError("x"), 2),
        (OutputError("x"), 2),
        (TargetError("x"), 1),
        (TargetUnusable("x"), 3),
        (SlaMissed("x"), 1),
        (Inconclusive("x"), 1),
        (Regression("x"), 1),
        (Interrupted("x"), 130),
        (LoadgenError("x"), 1),
    ],
)
def test_exit_codes(error: LoadgenError, code: int) -> None:
    assert error.exit_code == code


def test_the_tree_is_drawn_in_the_errors_docstring() -> None:
    doc = errors_module.__doc__ or ""
    for cls in every_error_class():
        line = next((ln for ln in doc.splitlines() if re.search(rf"\b{cls.__name__}\b ", ln)), "")
        assert f"exit {cls.exit_code}" in line, cls.__name__


def test_an_unwritable_out_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    a_file = tmp_path / "taken"
    a_file.write_text("")
    code, _, err = run_cli(["run", str(path), "--out", str(a_file)], capsys)
    assert code == 2
    assert err.strip() == f"loadgen: Invalid value for '--out': Directory '{a_file}' is a file."
    code, _, err = run_cli(["run", str(path), "--out", str(a_file / "sub")], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"loadgen: results directory {a_file / 'sub'}: cannot write there")
    assert "Traceback" not in err


def test_the_runner_refuses_a_results_dir_that_is_a_file(tmp_path: Path) -> None:
    a_file = tmp_path / "taken"
    a_file.write_text("")
    sc = parse_scenario(SCENARIO, "s.yaml")
    with pytest.raises(OutputError, match="exists and is not a directory"):
        run_scenario(sc, RunOptions(out_dir=a_file, quiet=True))


def step(index: int, *, ok: int = 4, checks: list[SlaCheck] | None = None) -> StepSummary:
    checks = checks or []
    s = StepSummary(
        index=index,
        load=LoadPoint(mode="concurrency", concurrency=index + 1),
        requests=RequestCounts(total=4, ok=ok, failed=4 - ok, errors={"http_500": 4 - ok}),
        sla=SlaResult(passed=all(c.passed for c in checks), checks=checks),
    )
    decide(s.sla, ok)
    return s


def within_client_error(s: StepSummary) -> None:
    """The step's TTFT p99 bound lies within loadgen's own error of the value."""
    s.sla.checks = [
        SlaCheck(
            metric="ttft_ms",
            stat="p99",
            bound=505.0,
            value=508.0,
            margin=-3.0,
            passed=False,
            verdict="inconclusive",
            client_band=[502.0, 508.0],
            client_error=True,
            reason="loadgen's readings may be up to 6 ms late here",
        )
    ]
    decide(s.sla, s.requests.ok)


def summary(*steps: StepSummary) -> Summary:
    return Summary(
        loadgen_version="0",
        name="t",
        run_id="r",
        target_url="http://h:1",
        api="openai-chat",
        model="m",
        clock_anchor=ClockAnchor(monotonic_ns=0, wall_ns=0),
        steps=list(steps),
    )


def check(metric: str, value: float, bound: float) -> SlaCheck:
    return SlaCheck(
        metric=metric,
        stat="p99",
        bound=bound,
        value=value,
        margin=bound - value,
        passed=value <= bound,
        verdict="met" if value <= bound else "missed",
    )


def test_no_success_at_all_is_target_unusable() -> None:
    failure = judge(summary(step(0, ok=0), step(1, ok=0)), fail_on_sla=False, strict=False)
    assert isinstance(failure, TargetUnusable)
    assert failure.exit_code == 3
    assert "no request succeeded" in str(failure)


def test_fail_on_sla_names_the_bound_that_was_missed() -> None:
    s = summary(
        step(0, checks=[check("ttft_ms", 120.0, 400)]),
        step(1, checks=[check("ttft_ms", 612.345, 400), check("tpot_ms", 20, 60)]),
    )
    assert judge(s, fail_on_sla=False, strict=False) is None
    failure = judge(s, fail_on_sla=True, strict=False)
    assert isinstance(failure, SlaMissed)
    assert str(failure) == "SLA missed: step 1: ttft_ms.p99 612.3 > 400"


def test_strict_fails_on_an_inconclusive_step() -> None:
    s = summary(step(0), step(1))
    assert judge(s, fail_on_sla=True, strict=True) is None
    within_client_error(s.steps[1])
    assert judge(s, fail_on_sla=False, strict=False) is None
    failure = judge(s, fail_on_sla=False, strict=True)
    assert isinstance(failure, Inconclusive)
    assert str(failure) == (
        "--strict: not decided with confidence: step 1: ttft_ms.p99 508 against 505: "
        "loadgen's readings may be up to 6 ms late here"
    )


COMMANDS = ["run", "workload", "report", "compare", "mock", "agent", "calibrate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_an_example_in_its_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = help_text([command, "--help"], capsys)
    assert re.search(rf"Examples?:\n +loadgen {command} ", out), out


def test_the_group_help_lists_every_command_and_the_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = help_text(["--help"], capsys)
    for command in COMMANDS:
        assert f"  {command} " in out
    assert f"Exit codes: {errors_module.exit_codes_brief()}" in " ".join(out.split())
    assert "3 target unusable" in " ".join(out.split())
    listing = out[out.index("Commands:") :]
    assert "..." not in listing  # each command's line is whole, not cut off mid-phrase


def test_run_options_are_typed(capsys: pytest.CaptureFixture[str]) -> None:
    params = {p.name: p for p in cli.commands["run"].params}
    assert "Choice" in type(params["api"].type).__name__
    assert "Choice" in type(params["metrics_profile"].type).__name__
    assert "IntRange" in type(params["requests"].type).__name__
    assert "FloatRange" in type(params["duration"].type).__name__
    assert "FloatRange" in type(params["usd_per_hour"].type).__name__
    assert "Path" in type(params["out_dir"].type).__name__
    assert "Path" in type(params["scenario"].type).__name__


@pytest.mark.parametrize("command", ["mock", "agent"])
def test_mock_and_agent_take_no_abbreviations_and_say_errors_in_one_line(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli([command, "--por", "1"], capsys)
    assert code == 2
    assert err.strip() == (
        f"loadgen {command}: unrecognized arguments: --por 1 (see loadgen {command} --help)"
    )


def test_every_exit_code_is_told_once_from_the_error_classes() -> None:
    """EXIT_CODES has every class's code, each class's texts, and 0; nothing else."""
    codes = {0, *(cls.exit_code for cls in every_error_class())}
    assert set(errors_module.EXIT_CODES) == codes
    for cls in every_error_class():
        if cls is LoadgenError:
            continue
        brief, meaning = errors_module.EXIT_CODES[cls.exit_code]
        assert cls.brief and cls.brief in brief, cls.__name__
        assert cls.meaning and cls.meaning in meaning, cls.__name__


def test_the_readme_table_of_exit_codes_is_the_one_the_classes_render() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = errors_module.exit_codes_markdown()
    assert table in readme, f"README.md's exit codes should read:\n{table}"
    rows = re.findall(r"^\| (\d+) \| ", readme, flags=re.MULTILINE)
    assert sorted(map(int, rows)) == sorted(errors_module.EXIT_CODES)  # no other table of codes


def test_report_into_an_unwritable_folder_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import loadgen.report.documents.writer

    def refuse(results_dir: Path) -> list[Path]:
        raise PermissionError(13, "Permission denied", str(results_dir / "report.md"))

    monkeypatch.setattr(loadgen.report.documents.writer, "write_reports", refuse)
    code, _, err = run_cli(["report", str(tmp_path)], capsys)
    assert code == 2
    assert err == (
        f"loadgen: {tmp_path}: cannot write there ({tmp_path / 'report.md'}): Permission denied\n"
    )


def test_strict_through_the_cli_ends_with_the_verdict_then_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import loadgen.run.command

    done = summary(step(0), step(1))
    within_client_error(done.steps[1])
    monkeypatch.setattr(loadgen.run.command, "run_scenario", lambda sc, opts: done)
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    out_dir = tmp_path / "out"
    main(["run", str(path), "--out", str(out_dir), "-q"])  # returns: exit 0
    assert capsys.readouterr().err == ""  # without --strict it is reported, not an exit code
    code, out, err = run_cli(["run", str(path), "--out", str(out_dir), "-q", "--strict"], capsys)
    assert code == 1
    assert out.splitlines() == ["verdict: no step ran", f"results: {out_dir}"]
    assert err.startswith("loadgen: --strict: not decided with confidence: step 1: ttft_ms")


def test_an_empty_url_flag_is_refused_not_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = tmp_path / "s.yaml"
    sc.write_text("target: {model: m}\nload: {concurrency: [1], requests_per_step: 1}\n")
    code, _, err = run_cli(["run", str(sc), "--url", "", "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "command line --url: target.url" in err
