"""The senders of a flow group: ns-3's TCPs, fluidnet's SBRM source, and RCP's rate-based senders.

=============== ==========================================================================
``newreno``     ``ns3::TcpNewReno``
``cubic``       ``ns3::TcpCubic``
``dctcp``       ``ns3::TcpDctcp`` (ECN-capable, per-packet echo; option ``g``, the alpha gain)
``vegas``       ``ns3::TcpVegas`` (options ``alpha``, ``beta``, ``gamma`` in packets)
``bbr``         ``ns3::TcpBbr``
``sbrm``        ``fluidnet::TcpSbrm``: Zimmermann's Direct Window Update source (options ``w``,
                the willingness to pay in packets/s, and ``kappa``, the gain kappa-bar)
``rcp``         ``fluidnet::RcpSender``: sends at the rate the routers stamp into its packets
``kelly``       ``fluidnet::TcpKelly``: Kunniyur & Srikant's window laws (12)/(13) (options
                ``kappa``, ``w`` = w_r/beta_r, ``beta``, ``nu`` (0: log x, else -1/x^nu) and ``d``,
                the law's round-trip delay in its time unit); it decreases on every loss, or with
                ``ecn=True`` on every ECN mark only ((40)/(41), per-packet echo)
``sliding``     ``fluidnet::TcpSlidingMode``: Ye et al.'s TCP law of the binary-feedback family
                (options ``alpha``, ``mu``, ``beta``; ``x_s``, a fixed slow-start threshold in
                packets/s, 0 for TCP's dynamic one)
``mrg``         ``fluidnet::TcpMrg``: Ye et al.'s minimum-rate-guaranteed law (20)-(22), the
                options of ``sliding`` and ``theta`` (target rate, packets/s) and ``r_max``
``generalized`` ``fluidnet::TcpGeneralized``: Misra, Baras & Ott's generalized TCP (1)-(2), per
                unmarked ACK ``W += c1 W^alpha``, per marked ACK ``W -= c2 W^beta`` (options ``c1``,
                ``c2``, ``alpha``, ``beta``; ECN with every mark echoed)
``tcp_rm``      ``fluidnet::TcpRm``: Zimmermann's TCP/RM (5.6.1)-(5.6.2), NewReno-ECN whose
                congestion avoidance adds ``kappa RTT w / cwnd`` per ACK and whose ECN reaction
                takes ``kappa cwnd`` away (options ``w``, ``kappa``)
``xcp``         ``fluidnet::TcpXcp``: Katabi et al.'s XCP sender, its window driven by the routers'
                feedback (use it over ``aqm=fn.packet.XCP()`` links)
=============== ==========================================================================

Every TCP flow can also ask for ECN (``ecn=True``); an AQM that marks needs it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import OptionError, ParameterError

__all__ = ["Transport", "as_transport", "TRANSPORTS"]

#: name -> (ns-3 congestion-control TypeId or None for RCP, {option: (attribute, default)})
TRANSPORTS: dict[str, tuple[str | None, dict[str, tuple[str, float]]]] = {
    "newreno": ("ns3::TcpNewReno", {}),
    "cubic": ("ns3::TcpCubic", {}),
    "dctcp": ("ns3::TcpDctcp", {"g": ("DctcpShiftG", 0.0625)}),
    "vegas": (
        "ns3::TcpVegas",
        {"alpha": ("Alpha", 2.0), "beta": ("Beta", 4.0), "gamma": ("Gamma", 1.0)},
    ),
    "bbr": ("ns3::TcpBbr", {}),
    "sbrm": ("fluidnet::TcpSbrm", {"w": ("W", 20.0), "kappa": ("Kappa", 0.2)}),
    "rcp": (None, {}),
    "kelly": (
        "fluidnet::TcpKelly",
        {
            "kappa": ("Kappa", 1.0),
            "w": ("Weight", 1.0),
            "beta": ("Beta", 0.5),
            "nu": ("Nu", 0.0),
            "d": ("Delay", 1.0),
        },
    ),
    "sliding": (
        "fluidnet::TcpSlidingMode",
        {
            "alpha": ("Alpha", 1.0),
            "mu": ("Mu", 1.0),
            "beta": ("Beta", 0.5),
            "x_s": ("FixedThreshold", 0.0),
        },
    ),
    "mrg": (
        "fluidnet::TcpMrg",
        {
            "alpha": ("Alpha", 1.0),
            "mu": ("Mu", 1.0),
            "beta": ("Beta", 0.5),
            "x_s": ("FixedThreshold", 0.0),
            "theta": ("Theta", 0.0),
            "r_max": ("RMax", 1.0),
        },
    ),
    "generalized": (
        "fluidnet::TcpGeneralized",
        {"c1": ("C1", 1.0), "c2": ("C2", 0.5), "alpha": ("Alpha", -1.0), "beta": ("Beta", 1.0)},
    ),
    "tcp_rm": ("fluidnet::TcpRm", {"w": ("W", 20.0), "kappa": ("Kappa", 0.1)}),
    "xcp": ("fluidnet::TcpXcp", {}),
}

#: transports whose receivers must echo every mark (RFC 8257's receiver, ns3::TcpDctcp)
_PER_PACKET_ECHO = ("dctcp", "sbrm", "generalized")
#: transports that always negotiate ECN
_ALWAYS_ECN = _PER_PACKET_ECHO + ("tcp_rm",)
#: (transport, option) pairs that may be 0 (an exponent, or a feature turned off)
_MAY_BE_ZERO = {("kelly", "nu"), ("sliding", "x_s"), ("mrg", "x_s"), ("mrg", "theta")}
#: (transport, option) pairs that may be any finite number (exponents)
_SIGNED = {("generalized", "alpha"), ("generalized", "beta")}


@dataclass(frozen=True, init=False)
class Transport:
    """A transport protocol and its options.

    Parameters
    ----------
    name : str
        One of :data:`TRANSPORTS` (see the module table).
    ecn : bool
        Negotiate ECN (always on for ``dctcp``, ``sbrm``, ``generalized`` and ``tcp_rm``; not
        used by ``rcp``; for ``kelly`` it also means reacting to marks and not to losses).
    **options
        The transport's options (``g`` for DCTCP, ``alpha``/``beta``/``gamma`` for Vegas,
        ``w``/``kappa`` for SBRM and TCP/RM, ``c1``/``c2``/``alpha``/``beta`` for the generalized
        TCP, ...: see the module table); others are an error.

    Examples
    --------
    >>> from fluidnet.packet import Transport
    >>> Transport("sbrm", w=20, kappa=0.2).options
    {'w': 20.0, 'kappa': 0.2}
    """

    name: str
    ecn: bool = False
    options: dict = field(default_factory=dict)

    def __init__(self, name: str, ecn: bool = False, **options: float) -> None:
        key = str(name).lower()
        if key not in TRANSPORTS:
            raise ParameterError(
                f"transport = {name!r} is not one fluidnet knows; use one of "
                f"{', '.join(TRANSPORTS)}"
            )
        if not isinstance(ecn, bool):
            raise ParameterError(f"Transport.ecn = {ecn!r} must be True or False")
        known = TRANSPORTS[key][1]
        clean = {}
        for k, v in options.items():
            if k not in known:
                allowed = ", ".join(known) or "none"
                raise ParameterError(f"Transport({key!r}) has no option {k!r} (options: {allowed})")
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise ParameterError(f"Transport({key!r}).{k} = {v!r} must be a number") from None
            if (key, k) in _SIGNED:
                if not math.isfinite(v):
                    raise ParameterError(f"Transport({key!r}).{k} = {v!r} must be a finite number")
            else:
                zero_ok = (key, k) in _MAY_BE_ZERO
                if not math.isfinite(v) or v < 0 or (v == 0 and not zero_ok):
                    rel = ">= 0" if zero_ok else "> 0"
                    raise ParameterError(
                        f"Transport({key!r}).{k} = {v!r} must be a finite number {rel}"
                    )
            clean[k] = v
        if key == "dctcp" and clean.get("g", 0.0625) > 1:
            raise ParameterError(f"Transport('dctcp').g = {clean['g']!r} must lie in (0, 1]")
        if key in ("sliding", "mrg") and clean.get("beta", 0.5) >= 1:
            raise ParameterError(f"Transport({key!r}).beta = {clean['beta']!r} must lie in (0, 1)")
        if key == "generalized":
            _check_generalized(clean)
        if key == "tcp_rm" and clean.get("kappa", 0.1) >= 1:
            raise ParameterError(f"Transport('tcp_rm').kappa = {clean['kappa']!r} must be < 1")
        object.__setattr__(self, "name", key)
        object.__setattr__(self, "ecn", ecn or key in _ALWAYS_ECN)
        object.__setattr__(self, "options", clean)

    def __hash__(self) -> int:
        return hash((self.name, self.ecn, tuple(sorted(self.options.items()))))

    def __reduce__(self):
        return (_rebuild, (self.name, self.ecn, dict(self.options)))

    @property
    def is_rcp(self) -> bool:
        return self.name == "rcp"

    @property
    def is_xcp(self) -> bool:
        return self.name == "xcp"

    def option(self, key: str) -> float:
        """An option's value (its default when not given).

        Parameters
        ----------
        key : str
            An option name of this transport.

        Returns
        -------
        float
        """
        known = TRANSPORTS[self.name][1]
        if key not in known:
            raise OptionError(
                f"transport {self.name!r} has no option {key!r}; its options: {sorted(known)}"
            )
        return self.options.get(key, known[key][1])

    def ns3(self) -> tuple[str, dict[str, str], str]:
        """(congestion-control TypeId, its attributes as text, the receivers' socket TypeId)."""
        type_id, known = TRANSPORTS[self.name]
        attrs = {known[k][0]: repr(v) for k, v in self.options.items()}
        echo = self.name in _PER_PACKET_ECHO
        if self.name == "kelly":  # marks only, each echoed, or losses only
            attrs["ReactToMarks"] = str(self.ecn).lower()
            echo = self.ecn
        sink = "ns3::TcpDctcp" if echo else "ns3::TcpNewReno"
        return type_id or "", attrs, sink


def _check_generalized(options: dict) -> None:
    """Misra, Baras & Ott's conditions on (c1, c2, alpha, beta): alpha < beta keeps the window
    bounded, and with beta = 1 the decrease c2 W must leave a positive window (c2 < 1)."""
    alpha, beta = options.get("alpha", -1.0), options.get("beta", 1.0)
    if not alpha < beta:
        raise ParameterError(
            f"Transport('generalized'): alpha = {alpha!r} must be below beta = {beta!r} (a "
            "bounded window, Misra, Baras & Ott Sec I)"
        )
    if beta == 1.0 and options.get("c2", 0.5) >= 1:
        raise ParameterError(
            f"Transport('generalized').c2 = {options['c2']!r} must be < 1 with beta = 1 (a "
            "marked ACK takes c2 W away)"
        )


def _rebuild(name: str, ecn: bool, options: dict) -> Transport:
    return Transport(name, ecn=ecn, **options)


def as_transport(value: Any, where: str = "transport") -> Transport:
    """A :class:`Transport` from an instance or a name.

    Raises
    ------
    ParameterError
        For an unknown name or another type, naming ``where``.
    """
    if isinstance(value, Transport):
        return value
    if isinstance(value, str):
        try:
            return Transport(value)
        except ParameterError as exc:
            raise ParameterError(f"{where}: {exc}") from None
    raise ParameterError(
        f"{where} = {value!r} ({type(value).__name__}) is not a transport: give a name such as "
        "'newreno' or fn.packet.Transport('sbrm', w=20, kappa=0.2)"
    )
