"""Imports flow one way: the stages of docs/architecture.md, each importing only those below it.

scenario -> workload -> client -> records -> metrics -> summary -> results ->
compare -> report; the target, execute, scale and run stages drive it; the mock and the
GPU agent stand apart. Read from the source with ``ast`` (nothing is imported), so
the rule holds for lazy imports inside functions too. The list of parts is
taken from the tree: a package or module added to ``loadgen/`` without an
entry in :data:`ALLOWED` fails :func:`test_every_part_of_the_package_has_rules`.

A package reaches another through its door (``from loadgen.scenario import
Timeouts``, never ``loadgen.scenario.target_spec``), but for the few deep
imports :data:`DEEP` names with their reason. :data:`NARROW` still says which
modules of a package a part may use: a name taken through a door counts as the
module the door takes it from.
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
    *("vocab", "bearer", "lazy"),
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
        "lazy",
        "metrics",
        "records",
        "redact",
        "scenario",
        "summary",
        "vocab",
    },
    # runs compared: what compare and the gate decide; report renders it
    "compare": {"errors", "lazy", "results", "summary", "vocab"},
    "report": {
        *{"compare", "errors", "metrics", "records", "redact", "results", "scenario", "summary"},
        *{"lazy", "vocab"},
    },
    "target": {
        *{"_version", "client", "clock", "control", "errors", "redact", "scenario", "summary"},
        *{"lazy", "telemetry", "vocab", "workload"},
    },
    "execute": {
        "client",
        "clock",
        "errors",
        "lazy",
        "records",
        "scenario",
        "summary",
        "target",
        "workload",
    },
    "scale": {
        *{"clock", "errors", "execute", "lazy", "records", "scenario", "summary", "target"},
        "workload",
    },
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
        *{"_version", "errors", "lazy", "records", "report", "results", "run", "scenario"},
        "summary",
    },
    # standalone programs: the mock shares only the kernel-stamp leaf, the GPU agent a token check
    "mock": {"netstamp", "clihelp"},
    "gpu_agent": {"bearer", "clihelp"},  # its --help laid out as click's; the token check
}


#: part -> {a part it may import: the only modules of it that it may use (by their whole
#: names; a name taken through a door is the module the door takes it from, see
#: :func:`resolved_imports`, and a name the door defines itself is the door's)}
NARROW: dict[str, dict[str, tuple[str, ...]]] = {
    "prom_endpoint": {"metrics": ("loadgen.metrics.latency",)},  # the per-request formulas
    "report": {
        # the resolved scenario and its SLA section, typed
        "scenario": ("loadgen.scenario.models", "loadgen.scenario.sla_spec"),
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
        # settings, timing
        "mock": ("loadgen.mock.settings", "loadgen.mock.config", "loadgen.mock.model"),
        "target": ("loadgen.target.mock",),  # the mock's command line (mock_args)
    },
}


#: the deep imports kept on purpose: (importing module, module below another package's
#: door) -> why it does not go through the door
DEEP: dict[tuple[str, str], str] = {
    ("loadgen.scale.worker", "loadgen.workload.deal"): (
        "the function deal is named as its module: the door handing it out would shadow it"
    ),
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
        f"{f.relative_to(PKG)} uses {m}"
        for f in sources(part)
        for m in resolved_imports(f)
        if part_of(m) in NARROW[part] and m not in NARROW[part][part_of(m)]
    }
    assert not bad


def is_package(module: str) -> bool:
    """``loadgen.report.terminal`` -> True (a folder with a door); a module or nothing: False."""
    return (PKG.parent.joinpath(*module.split(".")) / "__init__.py").is_file()


def is_module(module: str) -> bool:
    return (
        is_package(module) or PKG.parent.joinpath(*module.split(".")).with_suffix(".py").is_file()
    )


def _from_imports(path: Path) -> Iterator[tuple[str, str]]:
    """``(module, name)`` of every ``from loadgen... import name`` in ``path``, any scope."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "loadgen":
            assert node.module and node.level == 0
            yield from ((node.module, a.name) for a in node.names)


def door_names(package: str) -> dict[str, str]:
    """What the door of ``package`` hands out: name -> the module it takes the name from.

    Read from the door's imports, eager or under ``if TYPE_CHECKING:`` (where a lazy
    door imports its names for mypy); a name the door defines itself is not among them.
    """
    door = PKG.parent.joinpath(*package.split(".")) / "__init__.py"
    return {name: module for module, name in _from_imports(door)}


def resolved_imports(path: Path) -> set[str]:
    """:func:`loadgen_imports`, with each name taken through a package's door counted as
    the module the door takes it from (the door itself for a name it defines)."""
    tree = ast.parse(path.read_text(), str(path))
    found = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    found = {m for m in found if m.split(".")[0] == "loadgen"}
    for module, name in _from_imports(path):
        if is_module(f"{module}.{name}"):
            found.add(f"{module}.{name}")  # from loadgen.report import plots
        elif is_package(module):
            found.add(door_names(module).get(name, module))
        else:
            found.add(module)
    return found


def deep_imports(path: Path, part: str | None = None) -> set[str]:
    """The modules below another part's door that ``path`` imports (``loadgen.x.y``, x a package).

    Inside its own part (``part``, else the one ``path`` is in) a module imports what it
    likes; a top-level module is its own door.
    """
    own = part or part_of(module_name(path))
    names = loadgen_imports(path) | {
        f"{m}.{n}" for m, n in _from_imports(path) if is_module(f"{m}.{n}")
    }
    return {
        m
        for m in names
        if part_of(m) != own and m.count(".") >= 2 and is_package(".".join(m.split(".")[:2]))
    }


def test_packages_reach_each_other_through_their_doors() -> None:
    """``from loadgen.scenario import Timeouts``, not ``from loadgen.scenario.target_spec``."""
    bad = {
        f"{module_name(path)} imports {m}"
        for path in PKG.rglob("*.py")
        for m in deep_imports(path)
        if (module_name(path), m) not in DEEP
    }
    assert not bad, "import these through the package's door, or name them in DEEP"


def test_every_deep_import_kept_is_still_made() -> None:
    made = {(module_name(p), m) for p in PKG.rglob("*.py") for m in deep_imports(p)}
    assert set(DEEP) <= made, "DEEP names an import that is gone"


def _all_of(door: Path) -> list[str]:
    for node in ast.parse(door.read_text()).body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            assert isinstance(node.value, ast.List), f"{door}: __all__ is not a literal list"
            return [ast.literal_eval(e) for e in node.value.elts]
    return []


def test_what_a_part_takes_through_a_door_is_in_its_all() -> None:
    bad = {
        f"{module_name(path)} takes {name} from {module}"
        for path in PKG.rglob("*.py")
        for module, name in _from_imports(path)
        if is_package(module) and part_of(module) != part_of(module_name(path))
        if not is_module(f"{module}.{name}")
        if name not in _all_of(PKG.parent.joinpath(*module.split(".")) / "__init__.py")
    }
    assert not bad


def test_no_door_hands_out_a_name_of_its_own_module() -> None:
    """``loadgen.x.f`` would be the function or the module ``x/f.py``, by import order."""
    for door in PKG.rglob("__init__.py"):
        own = {p.stem for p in door.parent.iterdir() if p.suffix == ".py" or p.is_dir()}
        assert not own & set(_all_of(door)), door.relative_to(PKG)


def test_a_lazy_door_imports_for_mypy_what_it_hands_out() -> None:
    """A lazy door's table (:mod:`loadgen.lazy`) equals its ``if TYPE_CHECKING:`` imports."""
    lazy = 0
    for door in PKG.rglob("__init__.py"):
        tree = ast.parse(door.read_text())
        tables = [
            n.value
            for n in tree.body
            if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "_EXPORTS"
        ]
        if not tables:
            assert "lazy_exports" not in door.read_text(), door.relative_to(PKG)
            continue
        lazy += 1
        package = module_name(door)
        table = ast.literal_eval(tables[0])
        typed = {
            a.name: node.module
            for block in tree.body
            if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
            for node in block.body
            if isinstance(node, ast.ImportFrom)
            for a in node.names
        }
        assert typed == {name: f"{package}.{sub}" for name, sub in table.items()}, package
        assert set(table) <= set(_all_of(door)), package
    assert lazy >= 2


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


def test_a_deep_import_is_caught(tmp_path: Path) -> None:
    """A planted deep import is caught, in a function too, and a submodule taken by name."""
    planted = tmp_path / "x.py"
    planted.write_text(
        "from loadgen.scenario.target_spec import Timeouts\n"
        "from loadgen.report import terminal\n"
        "def f():\n    import loadgen.results.files\n"
        "from loadgen.scenario import Timeouts\nfrom loadgen.clock import now_ns\n"
        "from loadgen.run.runner import run_scenario\n"
    )
    assert deep_imports(planted, "run") == {
        "loadgen.scenario.target_spec",
        "loadgen.report.terminal",
        "loadgen.results.files",
    }


def test_a_new_part_without_rules_and_an_import_against_them_both_fail(tmp_path: Path) -> None:
    """The test's own checks can fail: a planted part and a planted import are caught."""
    assert "planted" not in ALLOWED
    assert part_of("loadgen.planted.x") not in ALLOWED
    src = tmp_path / "bad.py"
    src.write_text("from loadgen.run import run_scenario\n")
    assert {part_of(m) for m in loadgen_imports(src)} - ALLOWED["report"] == {"run"}


def test_a_name_through_a_door_counts_as_the_module_it_comes_from(tmp_path: Path) -> None:
    planted = tmp_path / "x.py"
    planted.write_text("from loadgen.metrics import ttft_ns, StepColumns\nimport loadgen.records\n")
    assert resolved_imports(planted) == {
        "loadgen.metrics.latency",
        "loadgen.metrics.columns",
        "loadgen.records",
    }
