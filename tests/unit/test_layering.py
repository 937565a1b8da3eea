"""Imports flow one way: the stages of docs/architecture.md, each importing only those below it.

scenario -> workload -> client -> records -> metrics -> summary -> results ->
compare -> report; the target, execute, scale and run stages drive it; the mock and the
GPU agent stand apart. Read from the source with ``ast`` (nothing is imported), so
the rule holds for lazy imports inside functions too. The list of parts is
taken from the tree: a package or module added to ``loadgen/`` without an
entry in :data:`ALLOWED` fails :func:`test_every_part_of_the_package_has_rules`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "loadgen"

#: the leaves: modules that import nothing of loadgen (the clock: only the netstamp leaf)
LEAVES = {
    *("_version", "clihelp", "clock", "netstamp", "errors", "redact", "stdio", "strict"),
    *("vocab", "bearer"),
}

#: part of loadgen -> the other parts it may import (a leaf: none)
ALLOWED: dict[str, set[str]] = {
    **{leaf: set() for leaf in LEAVES},
    "clock": {"netstamp"},  # kernel receive stamps in the monotonic clock
    "scenario": {"bearer", "errors", "redact", "strict", "vocab"},  # bearer: the loopback test
    "workload": {"scenario", "errors", "vocab"},
    "records": {"errors"},
    "client": {"clock", "netstamp", "records", "workload", "errors"},
    "summary": {"redact", "strict", "vocab"},
    "metrics": {"clock", "records", "scenario", "summary", "vocab"},
    # one bounded, time-limited client for every request outside the load path
    "control": {"redact"},
    "telemetry": {"_version", "clock", "control", "redact", "summary"},
    "results": {
        "_version",
        "errors",
        "metrics",
        "records",
        "redact",
        "scenario",
        "summary",
        "vocab",
    },
    # runs compared: what compare and the gate decide; report renders it
    "compare": {"errors", "results", "summary", "vocab"},
    "report": {
        *{"compare", "errors", "metrics", "records", "redact", "results", "scenario", "summary"},
        "vocab",
    },
    "target": {
        *{"_version", "client", "clock", "control", "errors", "redact", "scenario", "summary"},
        *{"telemetry", "vocab", "workload"},
    },
    "execute": {
        "client",
        "clock",
        "errors",
        "records",
        "scenario",
        "summary",
        "target",
        "workload",
    },
    "scale": {"clock", "errors", "execute", "records", "scenario", "summary", "target", "workload"},
    # loadgen's own client metrics for Prometheus: the records and their latency formulas
    "prom_endpoint": {"bearer", "clock", "errors", "metrics", "records"},
    "run": {
        *{"clock", "errors", "redact", "records", "scenario", "workload", "client", "metrics"},
        *{"summary", "results", "target", "execute", "scale", "telemetry", "report"},
        *{"compare", "prom_endpoint"},
    },
    # a finished results directory into Parquet files and an MLflow run
    "export": {"errors", "records", "redact", "report", "results", "summary"},
    "ceiling": {"client", "clock", "execute", "records", "scenario", "target", "workload"},
    # `loadgen workload`'s forecast: the plans, the confidence math, the mock's timing model
    "forecast": {"metrics", "mock", "scenario", "target", "vocab", "workload"},
    # the command line sits on top of everything
    "cli": {
        *{"gpu_agent", "ceiling", "clock", "errors", "export", "mock", "records", "report"},
        *{"compare", "results"},
        *{"forecast", "redact", "run", "scenario", "stdio", "vocab", "workload"},
        "target",  # `loadgen init`: the probe and the file it writes (NARROW below)
    },
    "__main__": {"cli"},
    # the public door re-exports (lazily) what users import
    "__init__": {
        *{"_version", "errors", "records", "report", "results", "run", "scenario", "summary"},
    },
    # standalone programs: the mock shares only the kernel-stamp leaf, the GPU agent a token check
    "mock": {"netstamp", "clihelp"},
    "gpu_agent": {"bearer", "clihelp"},  # its --help laid out as click's; the token check
}


#: part -> {a part it may import: the only modules of it that it may import (by their
#: whole names: ``loadgen.scenario`` is the door, not every module under it)}
NARROW: dict[str, dict[str, tuple[str, ...]]] = {
    "prom_endpoint": {"metrics": ("loadgen.metrics.latency",)},  # the per-request formulas
    "report": {
        # the resolved scenario and its sections, typed
        "scenario": ("loadgen.scenario", "loadgen.scenario.models"),
        # the per-request formulas and the profile's, for CDFs and the bootstrap; the
        # frontier's Pareto front and best point, for frontier.png and compare
        "metrics": (
            "loadgen.metrics.latency",
            "loadgen.metrics.profiles",
            "loadgen.metrics.frontier",
        ),
    },
    "cli": {
        # `loadgen init` only; a run reaches the target through loadgen.run
        "target": ("loadgen.target.probe", "loadgen.target.starter"),
    },
    "forecast": {
        "metrics": ("loadgen.metrics.confidence",),  # requests_needed, nothing that reads records
        "mock": ("loadgen.mock", "loadgen.mock.config", "loadgen.mock.model"),  # settings, timing
        "target": ("loadgen.target.mock",),  # the mock's command line (mock_args)
    },
}


def loadgen_imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    """The ``loadgen.*`` modules ``path`` imports (every import, or module-scope ones only).

    ``top_level_only`` leaves out imports inside functions and ``if TYPE_CHECKING``
    blocks: the ones that run when the module is imported.
    """
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(), str(path)), top_level_only):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "loadgen":
            names = [f"loadgen.{a.name}" for a in node.names]  # from loadgen import clock
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found |= {n for n in names if n == "loadgen" or n.startswith("loadgen.")}
    return found


def _import_nodes(tree: ast.Module, top_level_only: bool) -> Iterator[ast.stmt]:
    if not top_level_only:
        yield from (n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))
        return
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            todo += [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            todo += [*node.body, *node.orelse, *node.finalbody]
            todo += [s for h in node.handlers for s in h.body]


def part_of(module: str) -> str:
    """``loadgen.client.h1.connection`` -> ``client``; ``loadgen`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def parts_in_tree() -> set[str]:
    """Every package and module directly under loadgen/ (a module without its ``.py``)."""
    return {
        p.name.removesuffix(".py")
        for p in PKG.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"
    }


def sources(part: str) -> list[Path]:
    target = PKG / part
    return sorted(target.rglob("*.py")) if target.is_dir() else [target.with_suffix(".py")]


def test_every_part_of_the_package_has_rules() -> None:
    tree = parts_in_tree()
    assert not tree - set(ALLOWED), "parts of loadgen/ without layering rules"
    assert not set(ALLOWED) - tree, "rules for parts that are gone"


def test_every_folder_under_loadgen_is_a_package_with_a_door() -> None:
    folders = [d for d in PKG.rglob("*") if d.is_dir() and d.name != "__pycache__"]
    assert folders
    for folder in folders:
        door = folder / "__init__.py"
        assert door.is_file(), f"{folder.relative_to(PKG)} has no __init__.py"
        doc = ast.get_docstring(ast.parse(door.read_text()))
        # what the package owns; which imports it may make is ALLOWED's, not the prose's
        assert doc and len(doc.split()) >= 8, f"{door.relative_to(PKG)}: no docstring of its own"


def test_the_rules_draw_no_circle() -> None:
    seen: dict[str, int] = {}

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, " -> ".join((*path, part))
        if seen.get(part):
            return
        for dep in ALLOWED[part]:
            visit(dep, (*path, part))
        seen[part] = 1

    for part in ALLOWED:
        visit(part, ())


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_imports_flow_one_way(part: str) -> None:
    files = sources(part)
    assert files and all(f.exists() for f in files)
    allowed = ALLOWED[part] | {part}
    bad = {
        f"{f.relative_to(PKG)} imports {m}"
        for f in files
        for m in loadgen_imports(f)
        if part_of(m) not in allowed
    }
    assert not bad


@pytest.mark.parametrize("part", sorted(NARROW))
def test_some_parts_may_use_only_some_modules_of_another(part: str) -> None:
    assert set(NARROW[part]) <= ALLOWED[part]
    bad = {
        f"{f.relative_to(PKG)} imports {m}"
        for f in sources(part)
        for m in loadgen_imports(f)
        if part_of(m) in NARROW[part] and m not in NARROW[part][part_of(m)]
    }
    assert not bad


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def test_no_module_imports_itself_back_in_a_circle() -> None:
    """Module-scope imports of loadgen/ form no cycle, within a package or across."""
    graph: dict[str, set[str]] = {}
    for path in PKG.rglob("*.py"):
        graph[module_name(path)] = loadgen_imports(path, top_level_only=True)
    assert len(graph) > 100
    state: dict[str, str] = {}

    def visit(mod: str, path: list[str]) -> None:
        if state.get(mod) == "done":
            return
        assert state.get(mod) != "open", " -> ".join([*path, mod])
        state[mod] = "open"
        for dep in graph.get(mod, ()):
            if dep in graph and dep != mod and not mod.startswith(dep + "."):
                visit(
                    dep, [*path, mod]
                )  # a package's door importing its own modules is not a circle
        state[mod] = "done"

    for mod in sorted(graph):
        visit(mod, [])


def test_the_checker_sees_lazy_imports(tmp_path: Path) -> None:
    src = tmp_path / "x.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import loadgen.summary\n"
        "def f():\n    from loadgen.run.runner import run_scenario\n    import loadgen.mock\n"
    )
    assert loadgen_imports(src) == {"loadgen.summary", "loadgen.run.runner", "loadgen.mock"}
    assert loadgen_imports(src, top_level_only=True) == set()
    assert {part_of(m) for m in loadgen_imports(src)} == {"summary", "run", "mock"}
    src.write_text("from loadgen import clock\n")
    assert loadgen_imports(src) == {"loadgen.clock"}


def test_a_new_part_without_rules_and_an_import_against_them_both_fail(tmp_path: Path) -> None:
    """The test's own checks can fail: a planted part and a planted import are caught."""
    assert "planted" not in ALLOWED
    assert part_of("loadgen.planted.x") not in ALLOWED
    src = tmp_path / "bad.py"
    src.write_text("from loadgen.run import run_scenario\n")
    assert {part_of(m) for m in loadgen_imports(src)} - ALLOWED["report"] == {"run"}
