"""Host CPU and memory from /proc text."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.gpu_agent.host import HostSampler, cpu_busy_total, mem_used_total

STAT = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n"
MEMINFO = "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    400 kB\n"


def test_parsers() -> None:
    assert cpu_busy_total(STAT) == (150, 1000)
    assert mem_used_total(MEMINFO) == (600 * 1024, 1000 * 1024)
    with pytest.raises(ValueError):
        cpu_busy_total("intr 1 2 3\n")


def test_sampler_reports_util_from_the_second_read(tmp_path: Path) -> None:
    (tmp_path / "stat").write_text(STAT)
    (tmp_path / "meminfo").write_text(MEMINFO)
    sampler = HostSampler(proc=tmp_path)
    first = sampler.sample()
    assert first.cpu_util_pct is None and first.mem_used_bytes == 600 * 1024
    (tmp_path / "stat").write_text("cpu  200 0 100 850 50 0 0 0 0 0\n")  # +150 busy, +50 idle
    assert sampler.sample().cpu_util_pct == pytest.approx(75.0)


def test_real_proc_is_readable() -> None:
    s = HostSampler().sample()
    assert s.mem_total_bytes and s.mem_total_bytes > 0
    assert s.as_dict()["kind"] == "host"
