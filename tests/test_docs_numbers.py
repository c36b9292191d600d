"""Numbers written in the documentation's prose are fluidnet's (issue 36): the worked example of
"Margins depend on where the loop is cut" in docs/concepts.md, recomputed here, so the prose
cannot drift from what the library says."""

from __future__ import annotations

from pathlib import Path

import fluidnet as fn

CONCEPTS = Path(__file__).resolve().parents[1] / "docs" / "concepts.md"


def primal_dual() -> fn.Model:
    t = fn.t
    x, p = fn.states("x p")
    k, w, gamma, N, C, T = fn.params("k w gamma N C T")
    return fn.Model(
        rhs={x: k * (w - x(t - T) * p(t - T)), p: gamma * (N * x(t - T / 2) - C)},
        params={k: 1.0, w: 10.0, gamma: 0.01, N: 10, C: 100.0, T: 0.2},
        name="primal-dual",
    )


def test_the_cut_example_in_concepts_holds_the_computed_numbers():
    text = CONCEPTS.read_text()
    m = primal_dual()
    at_price = fn.margins(m.loop_gain("p")).delay_margin
    at_rate = fn.margins(m.loop_gain("x")).delay_margin
    T_c = fn.critical_value(m, "T", 0.2, 5.0).value
    for value in (at_price, at_rate, T_c - 0.2, T_c):
        assert f"${value:.3f}$" in text, value
    # the three answers differ, in the order the page explains
    assert at_price > at_rate > T_c - 0.2
    rcp = fn.models.rcp()
    for cut in ("R", "q"):
        assert f"${fn.margins(rcp.loop_gain(cut)).delay_margin:.3f}$" in text, cut
    # RCP is the same function of s d0 at every d0: the rightmost roots scale as 1/d0
    r1 = rcp.linearize(params={"d0": 0.2}).roots(k=2).values * 0.2
    r2 = rcp.linearize(params={"d0": 2.0}).roots(k=2).values * 2.0
    assert abs(r1[0] - r2[0]) < 1e-9
