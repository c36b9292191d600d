"""The API contract (issue 24), checked on every public callable, in the spirit of
python-control's ``kwargs_test.py``.

Every function and class (its constructor) named in ``__all__`` of :mod:`fluidnet`,
:mod:`fluidnet.models`, :mod:`fluidnet.sweep` and :mod:`fluidnet.packet` is checked against
the conventions stated once in ``docs/concepts.md`` ("The API contract"):

* no keyword has a name the 0.2.0 release renamed (:data:`BANNED`);
* ranges: a keyword named like a range (``*_range``, ``*_bounds``, ``bounds``, ``support``) is
  ``x_range``/``y_range`` (planes), ``w_range`` (frequencies) or ``window_range`` (the
  window of a stochastic window distribution); the swept parameter's
  interval of a 1-D scan is the pair ``lo, hi``, in that order, positional;
* parameter overrides: a callable taking per-parameter keyword overrides (``**fixed``,
  ``**keywords``) also takes ``params=``; ``**params`` is not a spelling of it; an outer
  product over parameter values is ``grid=`` (``grids`` is banned);
* sizes: ``n_points`` is never documented as a discretization size;
* every parameter is in the numpydoc ``Parameters`` section of its docstring (for a class: of
  the class docstring, where ``Attributes`` also counts, for dataclass fields);
* every function has a return annotation.

The checker is a plain function, :func:`violations`; the last tests run it on deliberately
broken functions defined here, so a checker that stopped seeing a violation fails too.
Deliberate exceptions are listed with their reasons (:data:`EXCEPTIONS`,
:data:`DOCSTRINGS_LATER`), and a test fails when one is no longer needed.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from collections.abc import Callable, Iterator

import pytest

MODULES = ("fluidnet", "fluidnet.models", "fluidnet.sweep", "fluidnet.packet")

#: Keyword names that 0.2.0 renamed or removed (CHANGELOG, 0.2.0), with what replaced them.
BANNED = {
    "x_bounds": "x_range",
    "y_bounds": "y_range",
    "bounds": "lo, hi (1-D scans) or x_range, y_range (planes)",
    "grids": "grid",
    "max_points": "max_nodes (a discretization size)",
    "support": "window_range",
    "n_scan": "(removed)",
    "xs": "x (values; the name is x_name)",
    "ys": "y (values; the name is y_name)",
}

#: The only names a range keyword may have (``window_range``: the range of the window, a
#: state, in the stochastic window distributions).
RANGE_NAMES = {"x_range", "y_range", "w_range", "window_range"}

#: Names that look like a range keyword.
RANGE_LIKE = re.compile(r"(_range|_bounds|^bounds|^support)$")

#: Variadic keywords that carry per-parameter overrides: such a callable takes ``params=``.
OVERRIDE_KEYWORDS = {"fixed", "keywords"}

#: Deliberate exceptions, each with its reason. The test fails when an exception is no longer
#: needed (so the list cannot rot).
EXCEPTIONS = {
    # a parameter's admissible set (a constraint checked on every value), not a searched range
    ("fluidnet.Param", "bounds"): "a Param's admissible interval, not a scan range",
    # sweep evaluates any function, not a model: its keywords are that function's arguments
    ("fluidnet.sweep.sweep", "fixed"): "the keywords of an arbitrary function",
}

#: Callables whose docstrings are checked only after issue 25's round (their modules,
#: fluidnet/stochastic/ and fluidnet/dde/compiled.py, are being moved or reworked in it).
DOCSTRINGS_LATER: set[str] = set()

#: Variadic keywords that are not parameter overrides: model factories take their
#: parameters' default values (they evaluate nothing), ``**options`` are passed on to a named
#: function, ``**unknown`` only turns a wrong keyword into a clear error.
NOT_OVERRIDES = {"values", "options", "unknown", "kw", "kwargs", "params_"}


# ----------------------------------------------------------------------------- the checker
def _documented(doc: str, sections: tuple[str, ...]) -> set[str]:
    """Names listed in the given numpydoc sections of ``doc``."""
    lines = inspect.cleandoc(doc or "").splitlines()
    names: set[str] = set()
    inside = False
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and set(nxt.strip()) == {"-"} and len(nxt.strip()) >= 3:
            inside = line.strip() in sections
            continue
        if not inside or not line or line.startswith(" ") or set(line.strip()) == {"-"}:
            continue
        head = re.split(r"\s:(\s|$)", line)[0].strip()
        for part in head.split(","):
            names.add(part.strip().lstrip("*"))
    return names


def _parameters(obj) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    # a leading underscore marks a private field (a dataclass's cache), not a parameter
    return [
        p
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and not p.name.startswith("_")
    ]


def violations(obj: Callable, qualname: str, *, method: bool = False) -> list[str]:
    """Every way ``obj`` (a public function, class or method) breaks the contract."""
    out: list[str] = []
    params = _parameters(obj)
    names = [p.name for p in params]

    def allowed(keyword: str) -> bool:
        return (qualname, keyword) in EXCEPTIONS

    for p in params:
        if p.name in BANNED and not allowed(p.name):
            out.append(f"{qualname}: keyword {p.name!r} is renamed ({BANNED[p.name]})")
        if RANGE_LIKE.search(p.name) and p.name not in RANGE_NAMES and not allowed(p.name):
            out.append(
                f"{qualname}: range keyword {p.name!r} must be one of {sorted(RANGE_NAMES)} "
                "(or lo, hi for a 1-D scan)"
            )
        if p.kind is p.VAR_KEYWORD and p.name == "params":
            out.append(f"{qualname}: **params; parameter overrides are params={{...}}")
    if "lo" in names or "hi" in names:
        ok = "lo" in names and "hi" in names and names.index("hi") == names.index("lo") + 1
        kinds = {params[names.index(n)].kind for n in ("lo", "hi") if n in names}
        if not ok or inspect.Parameter.KEYWORD_ONLY in kinds:
            out.append(f"{qualname}: lo, hi must be a positional pair, lo first")
    var_kw = [p.name for p in params if p.kind is p.VAR_KEYWORD]
    overrides = [v for v in var_kw if v in OVERRIDE_KEYWORDS and not allowed(v)]
    if overrides and "params" not in names:
        out.append(f"{qualname}: takes parameter overrides as keywords but no params=")
    if "n_points" in names:
        doc = inspect.getdoc(obj) or ""
        if re.search(r"n_points[^\n]*\n[^\n]*(discreti[sz]ation|Chebyshev|collocation)", doc):
            out.append(f"{qualname}: n_points names a discretization size")
    if qualname in DOCSTRINGS_LATER:
        return out
    if inspect.isclass(obj):
        fields = (
            {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
        )
        documented = _documented(obj.__doc__, ("Parameters", "Attributes", "Other Parameters"))
        for n in names:
            if n not in documented and not (n in fields and n in documented):
                out.append(f"{qualname}: parameter {n!r} is not in the class docstring")
        return out
    documented = _documented(obj.__doc__, ("Parameters", "Other Parameters"))
    for n in names:
        if n not in documented:
            out.append(f"{qualname}: parameter {n!r} is not in the Parameters section")
    if not method and inspect.signature(obj).return_annotation is inspect.Signature.empty:
        out.append(f"{qualname}: no return annotation")
    return out


def public_callables() -> Iterator[tuple[str, Callable]]:
    """``(qualified name, object)`` for every public function and class of :data:`MODULES`."""
    seen: set[int] = set()
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            seen.add(id(obj))
            yield f"{modname}.{name}", obj


def contract_violations() -> list[str]:
    out: list[str] = []
    for qualname, obj in public_callables():
        out += violations(obj, qualname)
    return out


# ----------------------------------------------------------------------------------- tests
def test_every_public_callable_follows_the_contract():
    found = contract_violations()
    assert not found, "\n".join(found)


def test_the_walk_sees_the_entry_points():
    """The walk is not vacuous: it reaches the entry points the contract is about."""
    names = {q for q, _ in public_callables()}
    for q in (
        "fluidnet.stability_chart",
        "fluidnet.critical_value",
        "fluidnet.continue_hopf",
        "fluidnet.periodic_orbit",
        "fluidnet.nonlinear_chart",
        "fluidnet.HopfCurve",
        "fluidnet.models.rcp",
        "fluidnet.sweep.sweep",
        "fluidnet.packet.agreement_map",
    ):
        assert q in names, q
    assert len(names) > 150


def test_exceptions_are_still_needed():
    """Each entry of EXCEPTIONS still names a keyword of that callable."""
    objs = dict(public_callables())
    for qualname, keyword in EXCEPTIONS:
        assert qualname in objs, qualname
        assert keyword in [p.name for p in _parameters(objs[qualname])], (qualname, keyword)
    for qualname in DOCSTRINGS_LATER:
        found = [v for v in violations(objs[qualname], "x") if "docstring" in v or "section" in v]
        assert found, f"{qualname} is documented now: drop it from DOCSTRINGS_LATER"


def test_result_curves_hold_names_in_x_name_and_values_in_x():
    import fluidnet as fn

    for cls in (fn.HopfCurve, fn.OrbitBranch, fn.EquilibriumCurve, fn.CycleFoldCurve):
        fields = {f.name: f.type for f in dataclasses.fields(cls)}
        assert fields["x_name"] == "str", cls
        assert fields["x"] == "np.ndarray", cls
        assert "xs" not in fields and "values" not in fields, cls


# ---------------------------------------------------------- the checker on broken functions
def _broken_range(model, x: str, y: str, *, x_bounds=None, y_range=None) -> None:
    """Deliberately broken: ``x_bounds``.

    Parameters
    ----------
    model : Model
    x, y : str
    x_bounds, y_range : (float, float), optional
    """


def _broken_overrides(model, name: str, lo: float, hi: float, **fixed) -> float:
    """Deliberately broken: keyword overrides without ``params=``.

    Parameters
    ----------
    model : Model
    name : str
    lo, hi : float
    **fixed
        Parameter values.
    """
    return 0.0


def _broken_grid(model, grids, *, omega_range=None, n_points: int = 5):
    """Deliberately broken: ``grids``, a frequency range not named ``w_range``, no return
    annotation, and ``n_points`` a discretization size.

    Parameters
    ----------
    model : Model
    grids : dict
    n_points : int
        The Chebyshev discretization size.
    """


def _broken_interval(model, name: str, *, hi: float, lo: float, **params) -> float:
    """Deliberately broken: ``hi`` before ``lo``, keyword-only, and ``**params``.

    Parameters
    ----------
    model : Model
    name : str
    hi, lo : float
    **params
    """
    return 0.0


@dataclasses.dataclass
class _BrokenCurve:
    """Deliberately broken: the values of ``x`` undocumented.

    Attributes
    ----------
    x_name : str
    """

    x_name: str
    xs: list


@pytest.mark.parametrize(
    "obj, expected",
    [
        (_broken_range, ["keyword 'x_bounds' is renamed", "range keyword 'x_bounds'"]),
        (_broken_overrides, ["no params="]),
        (
            _broken_grid,
            [
                "keyword 'grids' is renamed",
                "range keyword 'omega_range'",
                "'omega_range' is not in the Parameters section",
                "no return annotation",
                "n_points names a discretization size",
            ],
        ),
        (_broken_interval, ["lo, hi must be a positional pair", "**params"]),
        (_BrokenCurve, ["keyword 'xs' is renamed", "'xs' is not in the class docstring"]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_the_checker_reports_a_broken_copy(obj, expected):
    found = violations(obj, obj.__name__)
    for e in expected:
        assert any(e in f for f in found), (e, found)
    assert len(found) == len(expected), found


def test_the_checker_passes_a_conforming_function():
    def good(model, name: str, lo: float, hi: float, *, params=None, **fixed) -> float:
        """A conforming entry point.

        Parameters
        ----------
        model : Model
        name : str
        lo, hi : float
        params : dict, optional
        **fixed
            The same as keywords.
        """
        return 0.0

    assert violations(good, "good") == []


# ------------------------------------------------------------------ results: one family each
#: Classes that public functions return but that are not analysis results: models and systems
#: to analyse, laws and scenarios to build them from, the executor of a sweep, the report of a
#: reproduction (printed and written to files by design).
NOT_RESULTS = {
    "Model": "a model to analyse",
    "DelayTF": "a transfer function to analyse",
    "LinearDDE": "a linear system to analyse",
    "QuasiPolynomial": "a characteristic function to analyse",
    "SavedModel": "a compiled model to simulate",
    "WindowChain": "a Markov chain to analyse",
    "FlowLaw": "a rate law, the input of a network model",
    "Utility": "a utility function, the input of a model",
    "BinaryFeedbackNetwork": "a network to simulate or analyse",
    "ReverseEngineered": "the symbolic utility of a law (sympy expressions)",
    "Executor": "runs a sweep",
    "Dumbbell": "a packet-level scenario to simulate",
    "Report": "the target report of a reproduction: printed and written to files",
}

#: Value types a function may return in more than one shape (like numpy: a number for a
#: number, an array for an array).
PLAIN = {"float", "int", "complex", "bool", "str", "np.ndarray", "NDArray", "ndarray", "Any"}


def _namespace() -> dict:
    import numpy as np
    import xarray as xr

    ns: dict = {"np": np, "xr": xr}
    for modname in (
        *MODULES,
        "fluidnet.stability",
        "fluidnet.bifurcation",
        "fluidnet.dde",
        "fluidnet.linear",
        "fluidnet.stochastic",
        "fluidnet.symbolic",
    ):
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                ns.setdefault(name, obj)
    return ns


def _members(annotation: str) -> list[str]:
    """The members of a return annotation's top-level union, ``None`` left out."""
    depth, cur, out = 0, "", []
    for ch in annotation:
        depth += ch in "[(" and 1 or 0
        depth -= ch in "])" and 1 or 0
        if ch == "|" and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [m for m in out if m not in ("None", "")]


def family_violations(qualname: str, obj: Callable, ns: dict) -> list[str]:
    """A function whose return type depends on its input values (beyond a number/array shape),
    or whose result class lacks ``.to_xarray()`` or ``.plot()``."""
    ann = inspect.signature(obj).return_annotation
    if ann is inspect.Signature.empty:
        return []
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
    members = _members(text)
    out: list[str] = []
    base = [m.split("[")[0] for m in members]
    if len(base) > 1 and not set(base) <= PLAIN:
        collection = len(base) == 2 and base[1] == base[0] + "s"
        if not collection:
            out.append(f"{qualname}: returns one of {members}: one family per function")
    for m in base:
        cls = ns.get(m.split(".")[-1]) if m not in PLAIN else None
        if cls is None or not inspect.isclass(cls) or cls.__name__ in NOT_RESULTS:
            continue
        if not cls.__module__.startswith("fluidnet"):
            continue
        missing = [a for a in ("to_xarray", "plot") if not callable(getattr(cls, a, None))]
        if missing:
            out.append(f"{qualname}: its result {cls.__name__} has no {' or '.join(missing)}()")
    return out


def test_every_result_is_one_family_with_to_xarray_and_plot():
    ns = _namespace()
    found: list[str] = []
    for qualname, obj in public_callables():
        if inspect.isfunction(obj):
            found += family_violations(qualname, obj, ns)
    assert not found, "\n".join(found)


class _NoPlot:
    """Deliberately broken: a result with ``to_xarray`` and no ``plot``."""

    __module__ = "fluidnet.fake"  # the checker looks at fluidnet's classes only

    def to_xarray(self) -> None:
        """Nothing."""


def _two_families(model) -> _NoPlot | xr.Dataset:  # noqa: F821
    """Deliberately broken: a result or a Dataset, depending on the input.

    Parameters
    ----------
    model : Model
    """
    return _NoPlot()


def test_the_family_checker_reports_a_broken_copy():
    ns = {**_namespace(), "_NoPlot": _NoPlot}
    found = family_violations("_two_families", _two_families, ns)
    assert any("one family per function" in f for f in found), found
    assert any("_NoPlot has no plot()" in f for f in found), found


# ------------------------------------------------------------------- methods of public classes
#: Methods whose docstrings still lack a ``Parameters`` section for some parameter (the other
#: conventions are checked on every method already). The test fails when one is documented and
#: still listed, so the list only shrinks. Empty since every public method has its section
#: (104 were listed at f4395a6); a new method must come documented.
METHOD_DOCSTRINGS_LATER: set[str] = set()


def public_methods() -> Iterator[tuple[str, Callable]]:
    """``(qualified name, function)`` for every public method defined in fluidnet on a public
    class."""
    for qualname, obj in public_callables():
        if not inspect.isclass(obj):
            continue
        for name, member in inspect.getmembers(obj, predicate=inspect.isfunction):
            if name.startswith("_") or not member.__module__.startswith("fluidnet"):
                continue
            yield f"{qualname}.{name}", member


def test_every_public_method_follows_the_contract():
    found = []
    for qualname, member in public_methods():
        for v in violations(member, qualname, method=True):
            if qualname in METHOD_DOCSTRINGS_LATER and "Parameters section" in v:
                continue
            found.append(v)
    assert not found, "\n".join(found)


def test_the_method_walk_is_not_vacuous_and_its_list_only_shrinks():
    methods = dict(public_methods())
    assert len(methods) > 150
    for q in ("fluidnet.Model.linearize", "fluidnet.LinearDDE.roots", "fluidnet.Solution.plot"):
        assert q in methods, q
    documented = [
        q
        for q in METHOD_DOCSTRINGS_LATER
        if q in methods
        and not any("Parameters section" in v for v in violations(methods[q], q, method=True))
    ]
    assert not documented, f"documented now, drop from METHOD_DOCSTRINGS_LATER: {documented}"
    assert set(METHOD_DOCSTRINGS_LATER) <= set(methods)


# -------------------------------------------------------------------------- type annotations
def annotation_gaps(obj: Callable, qualname: str) -> list[str]:
    """Parameters of a public function or method without a type annotation (the issue's
    "complete annotations on the public API"), and a missing return annotation."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    out = [
        f"{qualname}: parameter {p.name!r} has no type annotation"
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
    ]
    if sig.return_annotation is inspect.Signature.empty and not qualname.endswith("__init__"):
        out.append(f"{qualname}: no return annotation")
    return out


def test_every_public_function_and_method_is_annotated():
    found: list[str] = []
    for qualname, obj in public_callables():
        if inspect.isfunction(obj):
            found += annotation_gaps(obj, qualname)
    for qualname, member in public_methods():
        found += [g for g in annotation_gaps(member, qualname) if "parameter" in g]
    assert not found, "\n".join(found)


def test_the_annotation_checker_reports_a_broken_copy():
    def half_typed(model, name: str, *, store=None):
        """Deliberately broken: ``model`` and ``store`` untyped, no return annotation."""

    found = annotation_gaps(half_typed, "half_typed")
    assert found == [
        "half_typed: parameter 'model' has no type annotation",
        "half_typed: parameter 'store' has no type annotation",
        "half_typed: no return annotation",
    ]
