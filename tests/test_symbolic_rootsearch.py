"""The numeric equilibrium search (issue 34): laws written from scratch whose equilibria the
symbolic path could not give (sympy ran for minutes, or the root finder missed the point),
checked against independent solutions (closed forms, one-dimensional reductions solved by
Brent's method, scipy's root finder from many starts on residuals written here by hand)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy
from equilibrium_laws import (
    kelly3,
    kelly_by_scipy,
    tandem,
    tandem_reference,
    window_red,
    window_reference,
)

import fluidnet as fn
from fluidnet.symbolic.closedforms import closed_forms
from fluidnet.symbolic.densenewton import newton
from fluidnet.symbolic.rootsearch import search, starts

t = fn.t


def test_window_law_with_queue_dependent_rtt_matches_the_cubic(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # nothing kept from other tests
    m = window_red()
    assert m.equilibrium() == pytest.approx(window_reference(), rel=1e-13)
    # no sympy: the cubic is not cheap by structure, the search is numeric and says so
    assert closed_forms(m, solve=False).status == "skipped"


@pytest.mark.parametrize("B", [8.0, 12.0, 16.0])
def test_kelly_exponential_marking_is_found_at_every_steepness(B):
    # at B = 12 the search said "no equilibrium found" (issue 34), found at 8 and 16; the
    # unique equilibrium (the optimum of a strictly concave problem) is scipy's from 400 starts
    reference = kelly_by_scipy(B)
    assert len(reference) == 1
    eqs = kelly3(B=B).equilibrium(all=True)
    assert len(eqs) == 1
    assert [eqs[0][s] for s in ("x1", "x2", "x3")] == pytest.approx(reference[0], rel=1e-10)


@pytest.mark.parametrize("C1", [2000.0, 1000.0])
def test_tandem_red_links_with_queue_dependent_rtts(C1):
    # sympy's solve ran 14 minutes before any numeric search (issue 34); link 1 empty
    # (C1 = 2000) or a bottleneck too (C1 = 1000)
    m = tandem(C1=C1)
    want = tandem_reference(C1)
    eq = m.equilibrium()
    assert eq == pytest.approx(want, rel=1e-11, abs=1e-12)
    assert eq.boundary == (("q1",) if want["q1"] == 0 else ())
    guess = {k: 1.1 * v + 1.0 for k, v in want.items()}
    assert m.equilibrium(guess=guess) == pytest.approx(want, rel=1e-11, abs=1e-12)


def test_tandem_red_returns_in_a_new_process(tmp_path):
    """The case of the issue as a user meets it: a new process, with and without guess=
    (on main: sympy's solve, unbounded, before the guess was looked at)."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from tandem_law import tandem
        m = tandem()
        print(m.equilibrium(guess={{"W1": 10.0, "W2": 10.0, "q1": 1.0, "q2": 100.0}})["q2"])
        print(m.equilibrium()["q2"])
        """
    )
    law = "import fluidnet as fn\nt = fn.t\n\n" + inspect.getsource(tandem)
    (tmp_path / "tandem_law.py").write_text(law)  # the law as a user's script has it
    env = {**os.environ, "FLUIDNET_CACHE": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    q2 = tandem_reference(2000.0)["q2"]
    assert [float(v) for v in out.stdout.split()] == pytest.approx([q2, q2], rel=1e-11)


def test_several_equilibria_are_all_found_by_deflation():
    # x^2 + y^2 = 5, x y = 2: four real roots (+-1, +-2), (+-2, +-1); Bezout's bound 4, so not
    # cheap for sympy: the numeric search finds every one
    x, y = fn.states("x y")
    m = fn.Model({x: x(t) ** 2 + y(t) ** 2 - 5, y: x(t) * y(t) - 2}, {})
    found = sorted((round(e["x"], 12), round(e["y"], 12)) for e in m.equilibrium(all=True))
    assert found == [(-2.0, -1.0), (-1.0, -2.0), (1.0, 2.0), (2.0, 1.0)]


def test_deflation_reaches_a_root_the_starts_do_not():
    # x' = (x - 1)(x - 50): from starts that fall on x = 1, deflating it leads Newton's method
    # on to x = 50
    x = fn.states("x")
    m = fn.Model({x: (x(t) - 1) * (x(t) - 50)}, {})
    from fluidnet.symbolic.equilibrium import _plan

    code = _plan(m).code
    one = newton(code, np.array([[0.5], [2.0]]), np.zeros(0))
    assert one.x[one.converged].ravel() == pytest.approx([1.0, 1.0], rel=1e-14)
    roots = [np.array([[1.0], [1.0]])]
    deflated = newton(code, np.array([[0.5], [2.0]]), np.zeros(0), roots=roots)
    assert deflated.converged.all()
    assert deflated.x.ravel() == pytest.approx([50.0, 50.0], rel=1e-13)


def test_no_equilibrium_lists_what_was_tried():
    x = fn.states("x")
    m = fn.Model({x: 1 + sympy.exp(-x(t))}, {}, name="never")
    with pytest.raises(fn.AnalysisError) as info:
        m.equilibrium()
    text = str(info.value)
    assert "no equilibrium found for model 'never'" in text
    assert "damped Newton from 23 starts" in text
    assert "the global Newton homotopy" in text
    assert "smallest scaled residual reached was" in text


def test_continuation_from_the_defaults_finds_what_the_starts_miss():
    # x' = 1/2 - tanh(B (x - c)): the root c + atanh(1/2)/B; with B = 100 the derivative
    # underflows to 0 farther than 3.5 from c, so no start reaches c = 37 (main: "no
    # equilibrium found"); continued in c from the model's own c = 1 (where the start x = 1
    # is in reach), the root is followed to c = 37
    x = fn.states("x")
    c, B = fn.params("c B")
    m = fn.Model({x: sympy.Rational(1, 2) - sympy.tanh(B * (x(t) - c))}, {c: 1.0, B: 100.0})
    from fluidnet.symbolic.equilibrium import _plan

    plan = _plan(m)
    assert not search(plan.code, np.array([37.0, 100.0]), plan.subsets, plan.states).candidates
    assert m.equilibrium(c=37.0)["x"] == pytest.approx(37.0 + np.arctanh(0.5) / 100, rel=1e-14)


def test_starts_are_deterministic_and_spread():
    S = starts(3, guess=np.array([5.0, 6.0, 7.0]))
    assert S.shape == (24, 3)
    assert S[0].tolist() == [5.0, 6.0, 7.0]
    np.testing.assert_array_equal(S, starts(3, guess=np.array([5.0, 6.0, 7.0])))
    positive = S[9:17]
    assert np.all(positive >= 1e-2) and np.all(positive <= 1e4)
    assert np.any(S < 0)


def test_a_continuum_is_represented_where_it_meets_the_boundary(tmp_path, monkeypatch):
    # RCP with no gain on the queue (beta = 0): every q >= 0 is an equilibrium with R = C/N; the
    # search finds points anywhere on that line, and returns the one where the queue is empty
    # (as RCP's closed form gives, and as the papers linearize), flagged not isolated; the batch
    # leaves such points to the per-point search
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # no closed forms kept by other tests
    m = fn.models.rcp()
    with pytest.warns(fn.EquilibriumWarning, match="not isolated"):
        eq = m.equilibrium(beta=0.0)
    assert eq == pytest.approx({"R": 1875.0, "q": 0.0}, rel=1e-14, abs=0) and not eq.isolated
    from fluidnet.symbolic.linearize import equilibria_batch

    X, ok, why = equilibria_batch(m, {"beta": np.array([0.2, 0.0, 0.1])}, reasons=True)
    assert ok.tolist() == [True, False, True]
    assert "not isolated" in why[1]
    assert X[[0, 2]] == pytest.approx(np.array([[1875.0, 0.0], [1875.0, 0.0]]), rel=1e-14)


def _same_equilibrium(a, b) -> bool:
    """Bit for bit: the values, the residual and the states held at the boundary."""
    return list(a.items()) == list(b.items()) and (a.residual, a.boundary) == (
        b.residual,
        b.boundary,
    )


@pytest.mark.parametrize(
    "make, values",
    [
        (window_red, [{}, {"d": 0.05}, {"d": 0.9}, {"K": 3e-4}]),
        (kelly3, [{"B": 4.0}, {"B": 12.0}]),
    ],
)
def test_first_equilibrium_is_the_full_searchs_first_and_stops_early(
    make, values, tmp_path, monkeypatch
):
    # the full search (both passes, every start) ranks an equilibrium free of the boundary with
    # no zero or negative state first: found by a leading row, nothing after it can come first
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # no search recalled from the disk
    from fluidnet.symbolic.equilibrium import _equilibria, first_equilibrium

    for v in values:
        m = make()
        assert _equilibria(m, None, False, v, first=True).settled
        first = first_equilibrium(m, **v)  # recalled: the same
        full = make().equilibrium(**v)
        assert _same_equilibrium(first, full)
    ref = window_reference(d=0.9)
    assert first_equilibrium(window_red(), d=0.9) == pytest.approx(ref, rel=1e-13)


def test_first_equilibrium_among_several_is_the_one_the_order_ranks_first(tmp_path, monkeypatch):
    # x^2 + y^2 = 5, x y = 2: (1, 2) and (2, 1) tie in rank; equilibrium() returns the first
    # found and warns about the others; first_equilibrium returns the same point, without
    # searching on for the others (so without the warning)
    import warnings

    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))  # no search recalled from the disk
    x, y = fn.states("x y")

    def make():
        return fn.Model({x: x(t) ** 2 + y(t) ** 2 - 5, y: x(t) * y(t) - 2}, {})

    from fluidnet.symbolic.equilibrium import first_equilibrium

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = first_equilibrium(make())
    with pytest.warns(fn.EquilibriumWarning, match="has 4 equilibria with f = 0"):
        full = make().equilibrium()
    assert _same_equilibrium(first, full)
    assert sorted(full.values()) == pytest.approx([1.0, 2.0], rel=1e-14)


def test_first_equilibrium_held_at_the_boundary_is_searched_in_full(tmp_path, monkeypatch):
    # the tandem's equilibrium at C1 = 2000 holds q1 at 0 (the first link is not a bottleneck):
    # an equilibrium free of the boundary found later would come first, so the search runs in
    # full, and gives what equilibrium() gives, warnings included
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path))
    from fluidnet.symbolic.equilibrium import _equilibria, first_equilibrium

    full = tandem().equilibrium(C1=2000.0)
    assert full.boundary == ("q1",)
    m = tandem()
    assert not _equilibria(m, None, False, {"C1": 2000.0}, first=True).settled
    assert _same_equilibrium(first_equilibrium(tandem(), C1=2000.0), full)
    assert full["q2"] == pytest.approx(tandem_reference(2000.0)["q2"], rel=1e-11)
    # Kelly's law at B = 16: no start reaches the equilibrium, continuation from the defaults
    # does (after the full search): the same point either way
    m = kelly3()
    assert not _equilibria(m, None, False, {"B": 16.0}, first=True).settled
    assert _same_equilibrium(first_equilibrium(kelly3(), B=16.0), kelly3().equilibrium(B=16.0))
    assert np.array(list(kelly3().equilibrium(B=16.0).values())) == pytest.approx(
        kelly_by_scipy(16.0)[0], rel=1e-10
    )


def test_newton_rows_stopped_by_until_are_those_of_the_full_run():
    # the leading rows handed to `until` are finished: stopping there leaves them as they are
    # at the end of the run without `until` (every row iterates on its own)
    from fluidnet.symbolic.equilibrium import _plan

    m = kelly3(B=12.0)
    plan = _plan(m)
    p = np.array([m.params[k].value for k in m.param_names], dtype=float)
    X0 = starts(plan.code.n, None, p)
    full = newton(plan.code, X0, p, quiet=8)
    seen = []

    def until(x, residual, a, b):
        seen.extend((k, x[k].copy(), residual[k]) for k in range(a, b))
        return b >= 4

    newton(plan.code, X0, p, quiet=8, until=until)
    assert [k for k, _, _ in seen[:4]] == [0, 1, 2, 3]
    for k, x, res in seen:
        assert np.array_equal(x, full.x[k]) and res == full.residual[k]
