"""Figs 6.6.12-6.6.14 in ns-3: the queue at Table 6.6.2's critical delays and its frequency against
the printed ``f_crit``.

Zimmermann ran ns-2 at the critical delay of each (N, c) pair, took the spectrum of the queue
(sampled at 20 Hz, FFT and MUSIC) and plotted the frequency of its low-frequency peak against the
model's ``f_crit`` (Fig 6.6.14: "good matches are scattered around the identity line"); Figs
6.6.12/6.6.13 show RED's and SBRM's queues and spectra, RED's amplitudes much larger.

Here the same laws run in ns-3 through :func:`fluidnet.packet.scenario_for` (``fn.models.sbrm()``
and ``fn.models.reno_red()`` at the pair's N and c, the delay d the printed ``d_crit``; SBRM's
marking queue and DWU sources, NewReno over RED with the model's thresholds and averaging), one
seed, three SBRM pairs and two RED pairs spanning the table's frequencies: SBRM (40, 9), (30, 10),
(60, 12); RED (30, 10), (40, 13) (c in packets/ms). The queue, sampled every 10 ms over the tail,
minus its mean, under a Hann window: the frequency of the largest peak of its spectrum between
0.2 and 5 Hz (below the packet-level frequencies the dissertation filters out).

Criteria, fixed before the runs: each frequency within 25 % of the printed ``f_crit`` (the
scatter of Fig 6.6.14 around the identity), and at (30, 10) RED's queue swinging more than
SBRM's (standard deviation over the tail). Run lengths: SBRM 16 s, the tail from 4 s (its
start-up, :func:`fluidnet.packet.transient`'s rule at half the critical delay is 2.4 s); RED
24 s, the tail from 8 s (after its start-up and five time constants of RED's 1-s average).
"""

from __future__ import annotations

import numpy as np

from ...packet import require_ns3
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER
from .data import TABLE_6_6_2_PRINTED

#: (law, N, c [pkts/ms]) of the runs.
PAIRS = (
    ("sbrm", 40, 9),
    ("sbrm", 30, 10),
    ("sbrm", 60, 12),
    ("reno_red", 30, 10),
    ("reno_red", 40, 13),
)
#: Run length and start of the tail per law (s).
LENGTHS = {"sbrm": (16.0, 4.0), "reno_red": (24.0, 8.0)}
#: The band searched for the oscillation (Hz).
BAND = (0.2, 5.0)


def printed(law: str, N: int, c: int) -> tuple[float, float]:
    """Table 6.6.2's (d_crit [s], f_crit [Hz]) of ``law`` at (N, c)."""
    for n, cc, d_red, d_sbrm, f_red, f_sbrm in TABLE_6_6_2_PRINTED:
        if (n, cc) == (N, c):
            d, f = (d_sbrm, f_sbrm) if law == "sbrm" else (d_red, f_red)
            return float(d) / 1000.0, float(f)
    raise KeyError((N, c))


def peak_frequency(
    t: np.ndarray, q: np.ndarray, *, after: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """The frequency (Hz) of the largest spectral peak of ``q`` over ``t >= after`` within
    :data:`BAND` (Hann window, zero-padded 8 times), with the spectrum (frequencies, power)."""
    sel = t >= after
    y = q[sel] - q[sel].mean()
    dt = float(np.median(np.diff(t[sel])))
    n = 8 * y.size
    power = np.abs(np.fft.rfft(y * np.hanning(y.size), n)) ** 2
    freq = np.fft.rfftfreq(n, dt)
    band = (freq >= BAND[0]) & (freq <= BAND[1])
    return float(freq[band][np.argmax(power[band])]), freq, power


def _scenario(law: str, N: int, c: int):
    import fluidnet as fn

    d, _ = printed(law, N, c)
    model = getattr(fn.models, law)()
    return fn.packet.scenario_for(model, params={"N": N, "c": c * 1000.0, "d": d})


@PAPER.item(
    title="SBRM and Reno/RED in ns-3 at Table 6.6.2's critical delays: f_crit (Figs 6.6.12-14)",
    quick={"pairs": (("sbrm", 30, 10),), "lengths": {"sbrm": (4.0, 2.0)}},
    pairs=[
        figure_pair(
            "packet_fcrit",
            "fig_6_6_4_stability_regions",
            "Figs 6.6.12-6.6.14 in ns-3: the queue's spectral peak at the printed critical "
            "delays against Table 6.6.2's f_crit, beside the model's stability regions",
            fluid_item="fig_6_6_4",
        )
    ],
)
def packet_fcrit(ctx: Context, pairs: tuple = PAIRS, lengths: dict | None = None) -> dict:
    """One ns-3 run per (law, N, c) at the printed critical delay (seed 1); the queue's spectral
    peak over the tail."""
    import fluidnet as fn

    require_ns3()
    lengths = {**LENGTHS, **(lengths or {})}
    scs = [_scenario(law, N, c) for law, N, c in pairs]
    runs = fn.packet.simulate_many(scs, [lengths[law][0] for law, _, _ in pairs], seeds=(1,))
    rows, values, spread = [], {}, {}
    fig, (ax_q, ax_f) = ctx.new_figure(1, 2, figsize=(10.5, 3.8))
    for (law, N, c), (run,) in zip(pairs, runs, strict=True):
        d, f_crit = printed(law, N, c)
        after = lengths[law][1]
        f, freq, power = peak_frequency(run.time, run.queue[:, 0], after=after)
        sel = run.time >= after
        std = float(np.std(run.queue[sel, 0]))
        spread[law, N, c] = std
        label = f"{'SBRM' if law == 'sbrm' else 'RED'} N={N} c={c}"
        rows.append(
            {
                "law": law,
                "N": N,
                "c [pkts/ms]": c,
                "d_crit [ms]": 1000 * d,
                "f_crit printed [Hz]": f_crit,
                "f ns-3 [Hz]": f,
                "mean queue": float(run.queue[sel, 0].mean()),
                "queue std": std,
                "utilisation": run.utilisation(after=after),
                "cpu [s]": run.cpu_time,
            }
        )
        values["f", law, N, c] = Value(f, expected=f_crit)
        ax_f.plot(f_crit, f, "o" if law == "sbrm" else "s", label=label)
        tail = (run.time >= after) & (run.time < after + 4.0)
        ax_q.plot(run.time[tail] - after, run.queue[tail, 0], lw=0.6, label=label)
    lim = (0.3, 3.0)
    ax_f.plot(lim, lim, "k-", lw=0.8)
    ax_f.fill_between(lim, [0.75 * x for x in lim], [1.25 * x for x in lim], color="0.9")
    ax_f.set(xlabel="f_crit, Table 6.6.2 [Hz]", ylabel="queue spectral peak, ns-3 [Hz]",
             xlim=lim, ylim=lim, title="Fig 6.6.14 in ns-3 (band: 25 %)")  # fmt: skip
    ax_f.legend(fontsize=7)
    ax_q.set(xlabel="time in the tail [s]", ylabel="queue [packets]",
             title="queues at the critical delays (Figs 6.6.12/13)")  # fmt: skip
    ax_q.legend(fontsize=7)
    ctx.table("packet_fcrit", rows)
    ctx.figure("packet_fcrit", fig)
    if ("sbrm", 30, 10) in spread and ("reno_red", 30, 10) in spread:
        red, sbrm = spread["reno_red", 30, 10], spread["sbrm", 30, 10]
        values["amplitude"] = Value(
            bool(red > sbrm), shown=f"queue std RED {red:.1f}, SBRM {sbrm:.1f} pkts"
        )
    return values
