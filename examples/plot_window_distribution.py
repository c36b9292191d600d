"""
The stationary window of a TCP flow with random marks
=====================================================

A Reno-like flow grows its window by ``1/w`` per unmarked acknowledgement and halves it on a
marked one; each ACK is marked with probability ``p``. Misra, Baras & Ott (2000) describe the
window as this Markov chain. fluidnet computes its stationary law two independent ways: the
piecewise-deterministic limit (small increments), solved as a delay-integral equation, and a
Monte Carlo simulation of the chain itself, with a confidence band. For constant ``p`` the mean
also follows from an exact series, ``fn.constant_mark_moment``, a third check.
"""

import matplotlib.pyplot as plt

import fluidnet as fn

w = fn.sympy.Symbol("w")
p = 0.002
chain = fn.WindowChain(increase=1 / w, decrease=w / 2, mark=p)
pdmp = fn.stationary_distribution(chain)
mc = fn.monte_carlo(chain, n_chains=1000, n_steps=40000, seed=1)
series = fn.constant_mark_moment(1, alpha=-1, c1=1.0, c2=0.5, p=p)
print(
    f"mean window: PDMP {pdmp.mean:.3f}, Monte Carlo {mc.mean:.3f} "
    f"(95% interval {mc.ci['mean'][0]:.3f} to {mc.ci['mean'][1]:.3f}), exact series {series:.3f}"
)

fig, ax = plt.subplots(figsize=(6, 3.8))
pdmp.plot(ax=ax, label="PDMP limit")
mc.plot(ax=ax, label="Monte Carlo of the chain", alpha=0.6)
ax.set_xlim(0, 120)
ax.legend(fontsize="small")
ax.set_title(f"stationary window law, mark probability p = {p}")
