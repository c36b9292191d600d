"""From a fluid model to its packet counterpart: :func:`scenario_for`, and what the comparison
needs to read the fluid model (:func:`fluid_view`).

=====================  ====================================================================
fluid model            packet scenario (ns-3)
=====================  ====================================================================
``mgt_red``            ``N`` NewReno flows, round-trip propagation delay ``Tp``, one link of
                       ``C`` packets/s with RED (``min_th``, ``max_th``, ``p_max``, gentle or
                       not), the averaging weight converted to a per-packet weight
``reno_red``           Zimmermann's Reno/RED: ``N`` NewReno flows, delay ``d``, RED with
                       ``alpha`` as the per-packet weight (its filter pole is ``alpha c``)
``hollot_pi``          ``N`` NewReno flows, the PI AQM discretized from ``K_pi``, ``z`` at
                       160 Hz (:meth:`PI.from_gains`), reference ``q_ref``
``sbrm``               ``N`` SBRM sources (Direct Window Update, ``w``, ``kappa``) on an SBRM
                       link (``gamma``, ``b0``), ECN marks
``dctcp``              ``N`` DCTCP flows (gain ``g``), marking above ``K`` packets, 1500-byte
                       packets
``rcp``                ``N`` RCP flows, RCP router with ``alpha``, ``beta``, ``T``
=====================  ====================================================================

Units: the fluid models count packets and packets per second; a link's rate in bit/s is
``C 8 (packet_size + 2)`` (two bytes of point-to-point framing), so the link serves exactly
``C`` packets of ``packet_size`` bytes per second.

The assumptions every mapping makes are written into the scenario's ``notes`` (and listed by
``scenario.describe()``); the main ones:

* **one ACK per segment** (``ack_every=1``): the window laws grow the window by ``1/W`` per
  ACK and one ACK per packet; ns-3's default delayed ACKs (one per two) halve NewReno's
  increase, and the issue that asked for this stage measured the mean queue of the MGT/RED
  default halved (54 packets against 111);
* **RED's drop spacing** (``red_spacing``): ns-3's RED (with its default ``Wait``) spaces drops
  so that the gap between two drops is uniform on ``[1/p_b, 2/p_b]`` packets, a fraction
  ``2 p_b / 3`` of the packets on average, where the fluid models drop (mark) every packet
  with probability ``p(x)``. ``red_spacing="as_is"`` (default) gives the packet RED the
  model's parameters, as the source papers' ns-2 experiments do; ``"compensate"`` sets its
  ``p_max`` to ``3/2`` of the model's, so that the average drop fraction is the model's
  profile. (Measured with the MGT/RED default: 60 NewReno flows needed a drop fraction of
  0.0064 at the window the model predicts, where the model's ``p* = 2/W*^2`` is 0.0099, the
  same factor of about 2/3 the other way; see the README for the mean queues either way.)
* drops, not ECN marks, for Reno (NewReno halves at most once per window of losses, the fluid
  law once per mark: the same at the loss rates of these models, a few per cent);
* a minimum RTO of 1 s (no spurious timeouts; the fluid models have no timeouts), a buffer of
  ``4 max_th`` (RED) or ``8 q_ref`` / ``4 b0`` / ``8 K`` packets, large enough never to be
  the bottleneck of the models' operating points;
* flows start uniformly over the first ``start`` seconds (default 1 s), from an initial window
  of 10 segments in slow start; the fluid comparison starts the model from an empty queue;
* every flow's round-trip propagation delay is the model's; packet transmission times add
  ``packet_size 8 / rate`` per hop (at most a few ms here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ModelError, ParameterError
from .aqm import PI, RCP, RED, SBRM
from .scenario import Dumbbell, Flows, Link
from .transport import Transport

if TYPE_CHECKING:
    from ..symbolic.model import Model

__all__ = ["scenario_for", "fluid_view", "SUPPORTED"]

#: Library models with a packet counterpart (by model name).
SUPPORTED = (
    "mgt_red",
    "mgt_red_gentle",
    "reno_red",
    "reno_red_plain",
    "hollot_pi",
    "sbrm",
    "dctcp",
    "rcp",
)

_ACK = (
    "one ACK per segment (ack_every=1): the fluid window law grows the window by 1/W per ACK "
    "with one ACK per packet; ns-3's default delayed ACKs would halve NewReno's increase"
)
_RTO = "minimum RTO 1 s: no spurious timeouts (the fluid model has none)"


def _red_note(spacing: str, p_max: float, packet_p_max: float) -> str:
    if spacing == "compensate":
        return (
            f"RED p_max {packet_p_max:g} = 3/2 x the model's {p_max:g}: ns-3's RED spaces its "
            "drops (gaps uniform on [1/p_b, 2/p_b]), dropping 2 p_b/3 of the packets on "
            "average; the fluid model drops each packet with probability p(x)"
        )
    return (
        f"RED p_max {packet_p_max:g} as in the model: ns-3's RED spaces its drops and drops "
        "2 p_b/3 of the packets on average, less than the model's p(x)"
    )


def _red(spacing: str, **kw: Any) -> tuple[RED, str]:
    if spacing not in ("compensate", "as_is"):
        raise ParameterError(f"red_spacing = {spacing!r}: use 'compensate' or 'as_is'")
    p_max = kw.pop("p_max")
    packet = min(1.0, 1.5 * p_max) if spacing == "compensate" else p_max
    return RED(p_max=packet, **kw), _red_note(spacing, p_max, packet)


def _values(model, params: Mapping[str, float] | None) -> dict[str, float]:
    vals = dict(model.values)
    for k, v in (params or {}).items():
        if k not in vals:
            raise ParameterError(
                f"params: {k!r} is not a parameter of model {model.name!r} "
                f"({', '.join(sorted(vals))})"
            )
        vals[k] = float(v)
    return vals


def _count(name: str, value: float) -> int:
    n = round(value)
    if n < 1 or abs(n - value) > 1e-9:
        raise ParameterError(
            f"{name} = {value!r}: a packet scenario needs a whole number of flows >= 1"
        )
    return int(n)


def scenario_for(
    model: Model,
    *,
    params: Mapping[str, float] | None = None,
    packet_size: int | None = None,
    buffer: int | None = None,
    start: float = 1.0,
    red_spacing: str = "as_is",
    ack_every: int = 1,
) -> Dumbbell:
    """The packet scenario of a library fluid model (see the module table and assumptions).

    Parameters
    ----------
    model : fluidnet.Model
        ``fn.models.mgt_red()``, ``reno_red()``, ``hollot_pi()``, ``sbrm()``, ``dctcp()`` or
        ``rcp()`` (any parameter values).
    params : dict, optional
        Overrides of the model's parameters (``{"N": 20, "Tp": 0.3}``).
    packet_size : int, optional
        Bytes per packet (default 1000; 1500 for DCTCP, as its model's capacity assumes).
    buffer : int, optional
        Buffer (packets); default: see the module notes.
    start : float
        Flows start uniformly over ``[0, start)`` seconds (0: all at once).
    red_spacing : {"compensate", "as_is"}
        How RED's drop spacing is mapped (module notes).
    ack_every : int
        Segments per ACK (1: the fluid laws' assumption).

    Returns
    -------
    Dumbbell
        With the mapping's assumptions in ``notes``, and the model's name and every parameter
        value in ``fluid`` (what :func:`fluidnet.compare` checks the fluid side against).

    Raises
    ------
    ModelError
        For a model without a packet counterpart.
    ParameterError
        For parameter values a packet scenario cannot have (a fractional number of flows, ...).

    Examples
    --------
    >>> import fluidnet as fn
    >>> sc = fn.packet.scenario_for(fn.models.mgt_red())
    >>> sc.flows[0].n, sc.flows[0].rtt, round(sc.capacity())
    (60, 0.2, 3750)
    """
    name = getattr(model, "name", None)
    if name not in SUPPORTED:
        raise ModelError(
            f"model {name!r} has no packet counterpart; scenario_for knows {', '.join(SUPPORTED)}"
        )
    v = _values(model, params)
    spread = (0.0, float(start)) if start > 0 else 0.0
    notes = [_ACK, _RTO]
    common = {"ack_every": ack_every, "min_rto": 1.0}
    size = int(packet_size) if packet_size is not None else (1500 if name == "dctcp" else 1000)

    if name in ("mgt_red", "mgt_red_gentle", "reno_red", "reno_red_plain"):
        if name.startswith("mgt"):
            N, C, R = v["N"], v["C"], v["Tp"]
            lo, hi, pm = v["min_th"], v["max_th"], v["p_max"]
            K = -math.log(1.0 - v["weight"]) / v["delta"]  # the averaging pole (rad/s)
            gentle = name.endswith("gentle")
        else:
            N, C, R = v["N"], v["c"], v["d"]
            lo, hi, pm = v["th_min"], v["th_max"], v["p_max"]
            K = v["alpha"] * v["c"]
            gentle = name == "reno_red"
        weight = -math.expm1(-K / C)  # per arriving packet, arrivals at rate C
        red, note = _red(red_spacing, min_th=lo, max_th=hi, p_max=pm, weight=weight, gentle=gentle)
        notes += [
            note,
            f"RED weight {weight:.4g} per arriving packet: the model's averaging pole "
            f"{K:.4g} rad/s at arrivals of C = {C:g} packets/s",
            "drops (no ECN); NewReno halves at most once per window of losses",
        ]
        link = Link.from_packets(C, size, buffer=buffer or int(4 * hi), aqm=red)
        flows = [Flows(n=_count("N", N), rtt=R, start=spread)]
    elif name == "hollot_pi":
        pi = PI.from_gains(v["K_pi"], v["z"], v["q_ref"], sample_rate=160.0)
        notes.append(
            f"PI a = {pi.a:.5g}, b = {pi.b:.5g}: backward difference of K_pi (s/z + 1)/s at "
            "160 Hz (Hollot et al.'s sampling); drops with probability p, no count spacing"
        )
        link = Link.from_packets(
            v["C"], size, buffer=buffer or int(max(8 * v["q_ref"], 100)), aqm=pi
        )
        flows = [Flows(n=_count("N", v["N"]), rtt=v["Tp"], start=spread)]
    elif name == "sbrm":
        notes.append(
            "SBRM marks each departing packet with 1 - exp(-gamma [b - b0]^+), b the packets "
            "behind it; sources update per ACK by kappa (w RTT/cwnd - mark), RTT their "
            "smoothed estimate (Zimmermann (4.2.3)); marks echoed per packet (DCTCP receiver)"
        )
        link = Link.from_packets(
            v["c"],
            size,
            buffer=buffer or int(max(4 * v["b0"], 200)),
            aqm=SBRM(gamma=v["gamma"], b0=v["b0"]),
        )
        transport = Transport("sbrm", w=v["w"], kappa=v["kappa"])
        flows = [Flows(n=_count("N", v["N"]), rtt=v["d"], transport=transport, start=spread)]
    elif name == "dctcp":
        notes.append(
            "DCTCP marks every packet that arrives to more than K packets (RED.step(K)); "
            "ns-3's DCTCP cuts its window by alpha/2 once per window of marks"
        )
        link = Link.from_packets(
            v["C"], size, buffer=buffer or int(max(8 * v["K"], 100)), aqm=RED.step(v["K"])
        )
        transport = Transport("dctcp", g=v["g"])
        flows = [Flows(n=_count("N", v["N"]), rtt=v["d"], transport=transport, start=spread)]
    else:  # rcp
        notes.append(
            "RCP router: R updated every min(T, d0) by eq (2) with d0 the average of the "
            "senders' RTTs (the fluid model's d0 + q/C); R(0) = 0.05 C; rate senders pace at "
            "the rate their ACKs echo"
        )
        aqm = RCP(alpha=v["alpha"], beta=v["beta"], interval=v["T"], initial_rtt=v["d0"])
        link = Link.from_packets(v["C"], size, buffer=buffer or 1000, aqm=aqm)
        transport = Transport("rcp")
        flows = [Flows(n=_count("N", v["N"]), rtt=v["d0"], transport=transport, start=spread)]
    fluid = (name, tuple(sorted(v.items())))
    return Dumbbell(
        link=link, flows=flows, packet_size=size, notes=tuple(notes), fluid=fluid, **common
    )


def fluid_view(model: Model, params: Mapping[str, float] | None = None) -> dict[str, Any]:
    """How to read a library model next to packets.

    Parameters
    ----------
    model : fluidnet.Model
        A library model with a packet counterpart (see :func:`scenario_for`).
    params : dict, optional
        Parameter overrides ``{name: value}``.

    Returns
    -------
    dict
        ``queue`` and ``window`` (state names; ``window`` None for RCP), ``capacity``
        (packets/s), ``rtt`` (round-trip propagation delay, s), ``history`` (a start from an
        empty queue and a window of one packet), and ``arrival(values)``: the input rate of
        the queue (packets/s) from the states' values (a dict of arrays) at the same time.

    Raises
    ------
    ModelError
        For a model without a packet counterpart.
    """
    name = getattr(model, "name", None)
    if name not in SUPPORTED:
        raise ModelError(
            f"model {name!r} has no packet counterpart; compare knows {', '.join(SUPPORTED)}"
        )
    v = _values(model, params)
    if name.startswith("mgt") or name == "hollot_pi":
        N, C, R = v["N"], v["C"], v["Tp"]
        third = "x" if name.startswith("mgt") else "p"
        return {
            "queue": "q",
            "window": "W",
            "capacity": C,
            "rtt": R,
            "history": {"W": 1.0, "q": 0.0, third: 0.0},
            "arrival": lambda s: N * s["W"] / (R + s["q"] / C),
        }
    if name.startswith("reno") or name == "sbrm":
        N, C, R = v["N"], v["c"], v["d"]
        history = {"W": 1.0, "b": 0.0} | ({"r": 0.0} if name.startswith("reno") else {})
        return {
            "queue": "b",
            "window": "W",
            "capacity": C,
            "rtt": R,
            "history": history,
            "arrival": lambda s: N * s["W"] / (R + s["b"] / C),
        }
    if name == "dctcp":
        N, C, R = v["N"], v["C"], v["d"]
        return {
            "queue": "q",
            "window": "W",
            "capacity": C,
            "rtt": R,
            "history": {"W": 1.0, "alpha": 0.0, "q": 0.0},
            "arrival": lambda s: N * s["W"] / (R + s["q"] / C),
        }
    N, C = v["N"], v["C"]
    return {
        "queue": "q",
        "window": None,
        "capacity": C,
        "rtt": v["d0"],
        "history": {"R": 0.05 * C, "q": 0.0},  # the router's R(0) = 0.05 C
        "arrival": lambda s: N * s["R"],
    }
