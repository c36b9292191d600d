"""How the tests are organised, checked (README, Tests; issue 25).

Every module under ``fluidnet/`` (the reproductions in ``fluidnet/papers`` aside, which
``tests/test_papers_*.py`` run item by item) has a test of its own: a file
``tests/test_<module>.py`` or ``tests/test_<stage>_<module>.py``, or an entry in
``tests/MODULES.toml`` naming the feature tests that test it. An entry must name files that
exist and that reference the module: import it, or take one of its public names from
fluidnet. A private module (``_x.py``) may instead be referenced through a module of its
package that imports it. A module tested only through other modules' tests is listed, with
how it is reached, in the map's ``[untested]`` table: the honest list of what still lacks a
test at its own level.
"""

from __future__ import annotations

import ast
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fluidnet"
TESTS = ROOT / "tests"
MAP = TESTS / "MODULES.toml"


@cache
def modules(root: Path = PACKAGE) -> list[str]:
    """Every module of the package as a path relative to it (``linear/stacked.py``), packages'
    ``__init__.py`` and the reproductions (``papers/``) left out."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if path.name != "__init__.py" and path.relative_to(root).parts[0] != "papers"
    )


def own_test_files(module: str, tests: Path = TESTS, root: Path = PACKAGE) -> list[Path]:
    """The test files named after ``module`` that exist: ``test_<stage>_<module>.py``, or
    ``test_<module>.py`` when no other module has that name (``test_errors.py`` is
    ``errors.py``'s, not ``packet/errors.py``'s)."""
    parts = Path(module).with_suffix("").parts
    names = {f"test_{'_'.join(parts)}.py"}
    if sum(Path(m).stem == parts[-1] for m in modules(root)) == 1:
        names.add(f"test_{parts[-1]}.py")
    return [tests / name for name in sorted(names) if (tests / name).exists()]


def dotted(module: str) -> str:
    """``linear/stacked.py`` -> ``fluidnet.linear.stacked``."""
    return ".".join(("fluidnet", *Path(module).with_suffix("").parts))


@cache
def public_names(module: str, root: Path = PACKAGE) -> frozenset[str]:
    """The names a module defines at its top level that do not start with ``_``."""
    tree = ast.parse((root / module).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(n for n in names if not n.startswith("_"))


@cache
def importers(module: str, root: Path = PACKAGE) -> frozenset[str]:
    """The modules of ``module``'s own package that import it (at any level)."""
    package = Path(module).parent
    name = dotted(module)
    found = set()
    for path in (root / package).glob("*.py"):
        other = path.relative_to(root).as_posix()
        if other == module or path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        dotted(other).split(".")[: -node.level] + ([base] if base else [])
                    )
                full = {base, *(f"{base}.{alias.name}" for alias in node.names)}
                if name in full:
                    found.add(other)
            elif isinstance(node, ast.Import) and any(a.name == name for a in node.names):
                found.add(other)
    return frozenset(found)


@cache
def fluidnet_names(test_file: Path) -> frozenset[str]:
    """The names a test file takes from fluidnet: those it imports from a ``fluidnet`` module
    and the attributes it reads off a name bound to one (``fn.bode``, ``linear.Stack``)."""
    tree = ast.parse(test_file.read_text())
    bound, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fluidnet"):
            for alias in node.names:
                names.add(alias.name)
                bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fluidnet"):
                    bound.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                names.add(node.attr)
    return frozenset(names)


def references(test_file: Path, module: str, root: Path = PACKAGE) -> bool:
    """Whether ``test_file`` imports ``module`` (or names it, e.g. for ``python -m``) or takes
    one of its public names from fluidnet; for a private module, also whether it is the test
    file of, or references, a module of the package that imports it."""
    text = test_file.read_text()
    name = dotted(module)
    package, _, last = name.rpartition(".")
    if name in text or re.search(rf"from {re.escape(package)} import [^\n]*\b{last}\b", text):
        return True
    if last == "__main__" and re.search(r'"-m",\s*"fluidnet"', text):
        return True
    if public_names(module, root) & fluidnet_names(test_file):
        return True
    if Path(module).name.startswith("_"):
        return any(
            test_file in own_test_files(other, test_file.parent, root)
            or references(test_file, other, root)
            for other in importers(module, root)
        )
    return False


def load_map(path: Path = MAP) -> tuple[dict[str, list[str]], dict[str, str]]:
    """``module -> [test files]`` and ``module -> how it is reached`` (the ``[modules]`` and
    ``[untested]`` tables of ``tests/MODULES.toml``)."""
    with path.open("rb") as file:
        table = tomllib.load(file)
    mapped = {module: list(files) for module, files in table.get("modules", {}).items()}
    return mapped, dict(table.get("untested", {}))


def layout_problems(root: Path = PACKAGE, tests: Path = TESTS, path: Path = MAP) -> list[str]:
    """What is wrong with the layout: one sentence per problem, empty when all is well."""
    mapped, untested = load_map(path)
    problems = []
    known = set(modules(root))
    for module in sorted((set(mapped) | set(untested)) - known):
        problems.append(f"MODULES.toml names {module}, which is not a module of fluidnet/")
    for module in sorted(known):
        files = mapped.get(module, [])
        own = own_test_files(module, tests, root)
        if module in untested and (own or files):
            problems.append(f"MODULES.toml lists {module} as untested, but it has tests")
        if not own and not files and module not in untested:
            problems.append(
                f"{module} has no tests/test_<module>.py and no entry in tests/MODULES.toml"
            )
        for name in files:
            test_file = tests / name
            if not test_file.exists():
                problems.append(f"MODULES.toml: {module} -> {name}, which does not exist")
            elif not references(test_file, module, root):
                problems.append(
                    f"MODULES.toml: {module} -> {name}, which neither imports {dotted(module)} "
                    "nor uses one of its public names"
                )
    return problems


def test_every_module_has_tests():
    assert layout_problems() == []


def test_map_lists_only_modules_without_own_file():
    """The map is for feature-tested modules; a module with a file of its own needs no entry
    (an entry would go stale silently when the file is renamed)."""
    doubled = [m for m in load_map()[0] if own_test_files(m)]
    assert doubled == []


@pytest.fixture
def tree(tmp_path):
    """A small package and tests directory to break on purpose."""
    root = tmp_path / "fluidnet"
    (root / "stage").mkdir(parents=True)
    (root / "stage" / "__init__.py").write_text("")
    (root / "stage" / "owned.py").write_text("def owned_value():\n    return 1\n")
    (root / "stage" / "mapped.py").write_text("class MappedThing:\n    pass\n")
    (root / "stage" / "_helper.py").write_text("def help_me():\n    return 2\n")
    (root / "stage" / "user.py").write_text("from ._helper import help_me\n")
    (root / "papers").mkdir()
    (root / "papers" / "item.py").write_text("")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_owned.py").write_text("from fluidnet.stage.owned import owned_value\n")
    (tests / "test_feature.py").write_text("import fluidnet as fn\nfn.MappedThing\n")
    (tests / "test_user.py").write_text("from fluidnet.stage import user\n")
    mapping = tmp_path / "MODULES.toml"
    return root, tests, mapping


def _write(mapping, entries, untested=None):
    lines = ["[modules]"] + [f'"{m}" = {files!r}'.replace("'", '"') for m, files in entries.items()]
    lines += ["[untested]"] + [f'"{m}" = "{how}"' for m, how in (untested or {}).items()]
    mapping.write_text("\n".join(lines) + "\n")


def test_layout_check_accepts_a_good_tree(tree):
    root, tests, mapping = tree
    _write(
        mapping,
        {
            "stage/mapped.py": ["test_feature.py"],
            "stage/_helper.py": ["test_user.py"],
            "stage/user.py": ["test_user.py"],
        },
    )
    assert layout_problems(root, tests, mapping) == []
    # a module listed as untested (with how it is reached) passes too
    _write(
        mapping,
        {"stage/_helper.py": ["test_user.py"], "stage/user.py": ["test_user.py"]},
        {"stage/mapped.py": "through test_feature.py"},
    )
    assert layout_problems(root, tests, mapping) == []


def test_layout_check_refuses_a_tested_module_listed_as_untested(tree):
    root, tests, mapping = tree
    _write(
        mapping,
        {
            "stage/mapped.py": ["test_feature.py"],
            "stage/_helper.py": ["test_user.py"],
            "stage/user.py": ["test_user.py"],
        },
        {"stage/owned.py": "never mind"},
    )
    problems = layout_problems(root, tests, mapping)
    assert problems == ["MODULES.toml lists stage/owned.py as untested, but it has tests"]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            {"stage/_helper.py": ["test_user.py"], "stage/user.py": ["test_user.py"]},
            "mapped.py has no",
        ),
        (
            {
                "stage/mapped.py": ["test_gone.py"],
                "stage/_helper.py": ["test_user.py"],
                "stage/user.py": ["test_user.py"],
            },
            "test_gone.py, which does not exist",
        ),
        (
            {
                "stage/mapped.py": ["test_owned.py"],
                "stage/_helper.py": ["test_user.py"],
                "stage/user.py": ["test_user.py"],
            },
            "test_owned.py, which neither imports fluidnet.stage.mapped",
        ),
        (
            {
                "stage/mapped.py": ["test_feature.py"],
                "stage/_helper.py": ["test_feature.py"],
                "stage/user.py": ["test_user.py"],
            },
            "_helper.py -> test_feature.py, which neither",
        ),
        (
            {
                "stage/mapped.py": ["test_feature.py"],
                "stage/gone.py": ["test_feature.py"],
                "stage/_helper.py": ["test_user.py"],
                "stage/user.py": ["test_user.py"],
            },
            "names stage/gone.py, which is not a module",
        ),
    ],
)
def test_layout_check_finds_each_fault(tree, entries, message):
    root, tests, mapping = tree
    _write(mapping, entries)
    problems = layout_problems(root, tests, mapping)
    assert len(problems) == 1 and message in problems[0], problems
