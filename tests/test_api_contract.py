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
DOCSTRINGS_LATER = {
    "fluidnet.SavedModel",
}

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
