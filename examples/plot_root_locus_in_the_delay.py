"""
Characteristic roots as the delay grows
=======================================

A delay equation has infinitely many characteristic roots. For the linearized primal law
``xi'(t) = -a xi(t - T)`` with ``a = kappa (B + 1)`` they are the branches of Lambert's W
function, ``s = W_k(-a T) / T``, so fluidnet's roots (spectral collocation refined by Newton
and certified by an argument-principle count) can be checked against a closed form. As ``T``
grows the rightmost pair moves right and crosses the imaginary axis at ``a T = pi / 2``.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import lambertw

import fluidnet as fn

a = 1.0
lin_at = {T: fn.LinearDDE([[0.0]], [(T, [[-a]])]) for T in (0.5, 1.0, np.pi / 2, 2.0)}

fig, ax = plt.subplots(figsize=(6, 4.5))
for i, (T, lin) in enumerate(lin_at.items()):
    roots = lin.roots(k=6)
    s = np.array([complex(r) for r in roots])
    exact = np.array([lambertw(-a * T, k) / T for k in range(-3, 3)])
    err = max(np.min(np.abs(exact - z)) for z in s)
    ax.plot(s.real, s.imag, "o", color=f"C{i}", label=f"T = {T:.3g} (max error {err:.1e})")
    ax.plot(exact.real, exact.imag, "+", color="k", ms=10)
ax.axvline(0.0, color="0.5", lw=0.8)
ax.set_xlabel("Re s")
ax.set_ylabel("Im s")
ax.set_xlim(-4.5, 1.0)
ax.legend(fontsize="small", loc="lower left")
ax.set_title("rightmost roots of s + a e^{-sT} = 0 (+: Lambert W)", fontsize="small")
