"""Text expressions (fluidnet.parsing): built over declared names, never run."""

from __future__ import annotations

import time

import pytest
import sympy

import fluidnet as fn
from fluidnet.errors import ModelError
from fluidnet.parsing import parse_expression


def _payloads(marker) -> list[str]:
    """Texts that create ``marker`` when evaluated as Python (as sympy.sympify does)."""
    m = str(marker)
    return [
        f"__import__('pathlib').Path({m!r}).write_text('ran')",
        f"exp(__import__('pathlib').Path({m!r}).write_text('ran'))",
        f"[__import__('pathlib').Path({m!r}).write_text('ran') for _ in (1,)][0]",
        f"(lambda: __import__('pathlib').Path({m!r}).write_text('ran'))()",
        f"x(t) + __builtins__['open']({m!r}, 'w').write('ran')",
        f"exp(1).__class__.__base__.__subclasses__() and open({m!r}, 'w').write('ran')",
    ]


def test_sympify_would_run_these_texts(tmp_path):
    # the premise of the module: evaluating the payloads as sympy.sympify does runs them
    marker = tmp_path / "marker"
    sympy.sympify(_payloads(marker)[0])
    assert marker.exists()


def test_model_text_is_parsed_over_its_names_and_never_run(tmp_path):
    marker = tmp_path / "marker"
    for text in _payloads(marker):
        with pytest.raises(ModelError, match="right-hand side of x"):
            fn.Model(rhs={"x": text}, params={"k": 1.0})
        with pytest.raises(ModelError, match="signal y"):
            fn.Model(rhs={"x": "-x(t)"}, signals={"y": text})
        assert not marker.exists(), text


def test_model_from_text_equals_model_from_sympy():
    x = fn.states("x")
    q = fn.signals("q")
    k, T, C = fn.params("k T C")
    want = fn.Model(
        rhs={x: -k * x(fn.t - T) + sympy.Max(q(fn.t) - C, 0) ** 2 / 2 + sympy.exp(-fn.t)},
        params={k: 1.0, T: 0.5, C: 2.0},
        signals={q: x(fn.t) ** 2},
    )
    got = fn.Model(
        rhs={"x": "-k*x(t - T) + Max(q(t) - C, 0)^2/2 + exp(-t)"},
        params={"k": 1.0, "T": 0.5, "C": 2.0},
        signals={"q": "x(t)**2"},
    )
    assert got.rhs == want.rhs and got.signals == want.signals
    assert sympy.simplify(got.form.rhs[0] - want.form.rhs[0]) == 0


def test_undeclared_names_and_constructs_are_named():
    with pytest.raises(ModelError, match="'c' is not a declared name"):
        fn.Model(rhs={"x": "-c*x(t)"}, params={"k": 1.0})
    with pytest.raises(ModelError, match="'y' is not a declared name"):
        fn.Model(rhs={"x": "-y(t)"}, params={"k": 1.0})
    with pytest.raises(ModelError, match="keyword argument"):
        fn.Model(rhs={"x": "exp(x=1)"})
    with pytest.raises(ModelError, match="constant str"):
        fn.Model(rhs={"x": "x(t) + 'a'"})
    with pytest.raises(ModelError, match="cannot parse"):
        fn.Model(rhs={"x": "x(t) +"})
    with pytest.raises(ModelError, match="Attribute"):
        fn.Model(rhs={"x": "x(t).func"})


def test_piecewise_and_comparisons_in_text():
    x = sympy.Symbol("x")
    got = parse_expression("Piecewise((x, x > 1), (0, True))", symbols={"x": x})
    assert got == sympy.Piecewise((x, x > 1), (0, True))
    with pytest.raises(ModelError, match="chained comparison"):
        parse_expression("0 < x < 1", symbols={"x": x})


def test_resource_bombs_are_refused_quickly():
    t0 = time.perf_counter()
    with pytest.raises(ModelError, match="numeric power"):
        parse_expression("9**9**9")
    with pytest.raises(ModelError, match="nested too deeply|cannot parse"):
        parse_expression("(" * 5000 + "1" + ")" * 5000)
    with pytest.raises(ModelError, match="longer than"):
        parse_expression("1+" * 60_000 + "1")
    assert time.perf_counter() - t0 < 5.0


def test_delay_tf_text_is_parsed_over_s_only(tmp_path):
    marker = tmp_path / "marker"
    for text in _payloads(marker):
        with pytest.raises(ModelError):
            fn.DelayTF.from_expr(text)
        with pytest.raises(ModelError):
            fn.as_delay_tf(text)
        assert not marker.exists(), text
    L = fn.DelayTF.from_expr("exp(-0.5*s)*(2*s + 1)/s^2")
    w = 1.3
    s = 1j * w
    want = sympy.exp(-0.5 * s) * (2 * s + 1) / s**2
    assert abs(L(s) - complex(want)) < 1e-14
    with pytest.raises(ModelError, match="'tau' is not a declared name"):
        fn.DelayTF.from_expr("exp(-tau*s)/s")


def test_loop_gain_equilibrium_takes_numbers_only(tmp_path):
    marker = tmp_path / "marker"
    m = fn.models.rcp()
    eq = m.equilibrium()
    for text in _payloads(marker):
        with pytest.raises(ModelError, match="equilibrium value of state 'R'"):
            m.loop_gain("R", equilibrium={**eq, "R": text})
        assert not marker.exists(), text
    L = m.loop_gain("R", equilibrium=eq)
    assert abs(L(1j) - m.loop_gain("R")(1j)) < 1e-12


MARKER_CODE = "__import__('pathlib').Path({path!r}).write_text('ran')"


@pytest.mark.parametrize(
    "call",
    [
        lambda text: fn.models.Utility.from_expr(text),
        lambda text: fn.models.sliding_mode.reverse_engineer(text, "x"),
        lambda text: fn.models.ored_marking(text, 1.0, 2.0, 0.1),
        lambda text: fn.WindowChain(text, "0.5*w", "0.01"),
    ],
)
def test_model_constructors_parse_text_without_running_it(tmp_path, call):
    marker = tmp_path / "ran"
    with pytest.raises(fn.ModelError):
        call(MARKER_CODE.format(path=str(marker)))
    assert not marker.exists()


def test_text_names_become_symbols():
    from fluidnet.parsing import as_expression

    x, a = sympy.symbols("x a")
    assert as_expression("a*x^2 + log(x)") == a * x**2 + sympy.log(x)
    assert as_expression(2) == 2
