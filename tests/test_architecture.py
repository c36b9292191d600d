"""The package's architecture, checked on its source (README, Layout; issue 25).

* No module imports a private name (``_name``, or anything of a ``_module``) of another stage:
  a helper two stages share is public in the lower one. The exceptions are listed in
  :data:`ALLOWED`, each with its reason.
* The import-linter contracts of ``pyproject.toml`` (run by ``make lint``) refuse an import
  that goes up the stages or closes a cycle: checked on a copy of the package with one bad
  import planted.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fluidnet"

#: Private names imported across stages on purpose: ``(importer prefix, imported name) -> why``.
ALLOWED = {
    ("fluidnet", "fluidnet._lazy.attach_stub"): (
        "the package's own machinery for lazy public names: private to the package (not part "
        "of the API), shared by every package __init__.py"
    ),
    ("fluidnet", "fluidnet._accessors"): (
        "the package's own machinery that puts ds.stability on every xarray Dataset at import "
        "fluidnet (not part of the API)"
    ),
    ("fluidnet", "fluidnet._daskcheck"): (
        "the package's own machinery that answers xarray's test for dask arrays without "
        "importing dask, installed with the accessor when xarray is imported (not part of the API)"
    ),
}


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    package = parts[-1] == "__init__"
    if package:
        parts = parts[:-1]
    return ".".join(parts), package


def _stage(module: str) -> str:
    """``fluidnet.<stage>`` (a subpackage, or a ground-floor module)."""
    return ".".join(module.split(".")[:2])


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(root: Path = PACKAGE) -> list[tuple[str, int, str]]:
    """``(importer, line, imported name)`` for every import, at any level of a module
    (functions included), of a private name or module of another stage."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module, package = _module_name(path, root)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if package else module.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [f"{target}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if not name.startswith("fluidnet.") or _stage(name) == _stage(module):
                    continue
                if any(_is_private(part) for part in name.split(".")[1:]):
                    found.append((module, node.lineno, name))
    return found


def _allowed(module: str, name: str) -> bool:
    return any(
        (module == prefix or module.startswith(prefix + ".")) and name.startswith(allowed)
        for prefix, allowed in ALLOWED
    )


def test_no_private_name_is_imported_across_stages():
    bad = [f"{m}:{line}: {name}" for m, line, name in private_imports() if not _allowed(m, name)]
    assert not bad, "private names imported from another stage:\n" + "\n".join(bad)


def test_every_allowed_exception_is_still_needed():
    used = {(m, name) for m, _, name in private_imports()}
    for prefix, allowed in ALLOWED:
        assert any(
            (m == prefix or m.startswith(prefix + ".")) and name.startswith(allowed)
            for m, name in used
        ), f"{allowed} is no longer imported by {prefix}: drop it from ALLOWED"


def test_the_scan_finds_a_private_import_from_a_function(tmp_path):
    # the check itself: a function-level import of another stage's private helper is found
    pkg = tmp_path / "fluidnet"
    (pkg / "linear").mkdir(parents=True)
    (pkg / "dde").mkdir()
    for f in ("__init__.py", "linear/__init__.py", "dde/__init__.py", "linear/roots.py"):
        (pkg / f).write_text("")
    (pkg / "dde" / "run.py").write_text(
        "def f():\n    from ..linear.roots import _helper\n    from ..linear import roots\n"
    )
    assert private_imports(pkg) == [("fluidnet.dde.run", 2, "fluidnet.linear.roots._helper")]


# ----------------------------------------------------------------------- import-linter
def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
         "lint_imports_command()", "--no-cache"],
        cwd=tree, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory):
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed (the dev extra)")
    tree = tmp_path_factory.mktemp("arch")
    shutil.copytree(
        PACKAGE, tree / "fluidnet", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def _planted(tree: Path, module: str, line: str):
    path = tree / "fluidnet" / module
    original = path.read_text()
    path.write_text(original + f"\n\ndef _planted():\n    {line}\n")
    return path, original


@pytest.mark.parametrize(
    ("module", "line", "message"),
    [
        # a stage importing a later stage, inside a function
        ("linear/roots.py", "from ..dde import simulate", "fluidnet.linear.roots -> fluidnet.dde"),
        # two sibling modules importing each other
        ("codegen/cache.py", "from .compiled import compile_form", "No cycles are allowed"),
    ],
)
def test_the_import_contracts_refuse_a_bad_import(package_copy, module, line, message):
    path, original = _planted(package_copy, module, line)
    try:
        result = _lint_imports(package_copy)
    finally:
        path.write_text(original)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout and message in result.stdout, result.stdout


def test_the_import_contracts_hold_on_the_package(package_copy):
    result = _lint_imports(package_copy)
    assert result.returncode == 0, result.stdout
    assert "Contracts: 2 kept, 0 broken." in result.stdout
