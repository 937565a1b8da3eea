"""Reports and compare on real runs against the built-in mock (fixed mode: known TTFT)."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.report.documents.writer import write_reports
from loadgen.results.files import read_summary

from .conftest import Runner, make_scenario

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing


def _run(run: Runner, ttft_ms: int) -> Path:
    scenario = make_scenario(
        target={"mock": {"args": ["--ttft-ms", str(ttft_ms), "--itl-ms", "1"]}},
        load={"mode": "concurrency", "concurrency": [1, 4], "requests_per_step": 24},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 16},
            "output_tokens": {"dist": "fixed", "value": 8},
        },
        # a p50, which 24 requests decide at 95% (a p99 would need 368); 40 ms leaves room
        # for stalls of the mock on a shared 2-core VM (its own truth shows 5 ms TTFTs
        # written up to 14 ms late now and then): this test checks the report, not the mock
        sla={"ttft_ms": {"p50": 40}},
    )
    _summary, _records, out = run(scenario)
    return out


@pytest.fixture
def two_runs(run: Runner) -> tuple[Path, Path]:
    return _run(run, 5), _run(run, 20)


def test_report_and_compare_both_ways(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fast, slow = two_runs
    written = {p.name for p in write_reports(fast)}
    assert {"steps.csv", "report.md", "report.html", "latency_throughput.png"} <= written
    rows = list(csv.DictReader((fast / "steps.csv").open()))
    assert [r["concurrency"] for r in rows] == ["1", "4"]
    assert all(5.0 <= float(r["ttft_ms_p50"]) < 15.0 for r in rows)
    assert [r["sla_verdict"] for r in rows] == ["met", "met"]

    gate = ["--fail-if", "ttft_ms.p50 > +10%", "--fail-if", "e2e_ms.mean > +5ms"]
    with pytest.raises(SystemExit) as info:
        main(["compare", str(fast), str(slow), "--out", str(tmp_path / "c1"), *gate])
    assert info.value.code == 1
    out = capsys.readouterr().out
    assert out.count("REGRESSION, beyond the bound") == 4  # two gates x two steps
    assert out.startswith("ttft_ms.p50 > +10%: REGRESSION (")  # the conclusions come first
    assert (tmp_path / "c1" / "compare_ttft_ms.png").is_file()

    main(["compare", str(slow), str(fast), "--out", str(tmp_path / "c2"), *gate])  # exit 0
    out = capsys.readouterr().out
    assert "REGRESSION" not in out and out.count("): within the bound") == 4


#: appended to a copy of report.html: once the page has loaded, write what a reader sees
_CHECK = """<script>
window.addEventListener("load", () => {
  const images = [...document.images];
  const broken = images.filter((i) => !(i.complete && i.naturalWidth > 0)).length;
  const v = document.querySelector(".verdict");
  const box = v ? v.getBoundingClientRect() : null;
  const shown = v && box.height > 0 && box.width > 0 && getComputedStyle(v).visibility !== "hidden";
  const text = v ? v.textContent.trim().slice(0, 60) : "";
  // the overview: the table under "Steps at a glance"; its last (SLA) column's right edge
  const h = [...document.querySelectorAll("h2")].find((e) => e.textContent === "Steps at a glance");
  const wrap = h ? h.nextElementSibling : null;
  const cells = wrap ? [...wrap.querySelectorAll("tr > :last-child")] : [];
  const right = Math.max(...cells.map((c) => c.getBoundingClientRect().right));
  const fits = wrap && wrap.scrollWidth <= wrap.clientWidth ? 1 : 0;
  const view = document.documentElement.clientWidth;
  const layout = `sla_right=${Math.ceil(right)} view=${view} fits=${fits} cells=${cells.length}`;
  const seen = `images=${images.length} broken=${broken} verdict=${shown ? 1 : 0} ${text}`;
  const line = `${layout} ${seen}`;
  document.body.insertAdjacentHTML("beforeend", `<pre id="lg-check">${line}</pre>`);
});
</script>"""


def _chromium_check(
    html: str, folder: Path, width: int = 1280
) -> tuple[int, int, bool, str, dict[str, int]]:
    """(images, broken images, verdict visible, its text, the overview's layout) of ``html``
    rendered in headless Chromium ``width`` px wide; the layout: ``sla_right`` (the right
    edge of the overview's SLA column), ``view`` (the viewport's width), ``fits`` (1: the
    overview needs no horizontal scroll), ``cells`` (the SLA column's cells)."""
    page = folder / "report-check.html"
    page.write_text(html.replace("</body>", _CHECK + "</body>"), encoding="utf-8")
    cmd = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
        "--disable-background-networking", "--disable-component-update", "--no-first-run",
        "--virtual-time-budget=10000", f"--window-size={width},2000", page.resolve().as_uri(),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=True)
    found = re.search(
        r'id="lg-check">(.*?) images=(\d+) broken=(\d+) verdict=(\d) ([^<]*)<', done.stdout
    )
    assert found, done.stdout[-2000:] + done.stderr[-2000:]
    layout = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", found[1])}
    return int(found[2]), int(found[3]), found[4] == "1", found[5], layout


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_html_renders_in_headless_chromium(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Every image decodes in a real browser and the verdict is on screen; a broken image
    is caught (the check can fail)."""
    fast, _ = two_runs
    write_reports(fast)
    html = (fast / "report.html").read_text(encoding="utf-8")
    plots = len(list((fast / "plots").glob("*.png")))
    images, broken, shown, text, _layout = _chromium_check(html, tmp_path)
    assert plots >= 3 and images >= plots  # every plot on the page (a missing one fails)
    assert broken == 0
    verdict = read_summary(fast / "summary.json").verdict
    assert verdict is not None and shown and text and verdict.text.startswith(text[:20])
    spoiled = html.replace("base64,iVBORw0KGgo", "base64,AAAAAAAAAA", 1)
    assert spoiled != html
    assert _chromium_check(spoiled, tmp_path)[1] == 1


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_overview_fits_a_1280_px_window(run: Runner, tmp_path: Path) -> None:
    """The "Steps at a glance" table needs no horizontal scroll at 1,280 px, its SLA column
    on screen; with a prefix-cache column too (14 columns), and at 1,920 px."""
    out = _run(run, 5)
    write_reports(out)
    html = (out / "report.html").read_text(encoding="utf-8")
    for width in (1280, 1920):
        layout = _chromium_check(html, tmp_path, width)[4]
        assert layout["cells"] == 3, layout  # the header and two steps
        assert layout["fits"] == 1 and layout["sla_right"] <= layout["view"], (width, layout)
    wider = html.replace(
        "<th>TTFT p99 (ms)</th>", "<th>TTFT p99 (ms)</th><th>prefix cache hit (%)</th>"
    )
    wider = re.sub(r"(<tr><td>\d+</td>(?:<td[^>]*>[^<]*</td>){8})", r"\1<td>100.0</td>", wider)
    assert wider.count("<td>100.0</td>") == 2
    layout = _chromium_check(wider, tmp_path)[4]
    assert layout["fits"] == 1 and layout["sla_right"] <= layout["view"], layout
