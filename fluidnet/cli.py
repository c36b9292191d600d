"""The ``fluidnet`` command line (also ``python -m fluidnet``)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="fluidnet", description=__doc__)
    p.add_argument("--version", action="version", version=f"fluidnet {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "reproduce",
        help="regenerate papers' figures and tables and check their targets",
        description="Regenerate figures and tables of the source papers and check every "
        "registered target. Exits with status 1 when a target fails.",
    )
    r.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="paper key (e.g. rcp) or paper:item (e.g. rcp:linearization)",
    )
    r.add_argument("--all", action="store_true", help="everything registered (the default)")
    r.add_argument("--out", default="papers", help="output root (default: ./papers)")
    r.add_argument("--quick", action="store_true", help="reduced grids (fast, for smoke tests)")
    r.add_argument("--list", action="store_true", help="list papers and items, then exit")
    r.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="run N items at a time, each in a worker process ('auto': one per core; "
        "default 1). The targets, report and figures do not depend on it",
    )
    r.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Dask scheduler (tcp://host:8786) for the items' ns-3 runs and agreement maps, "
        "one task per run (default: $FLUIDNET_SCHEDULER, else none)",
    )
    r.add_argument(
        "--rerun",
        action="store_true",
        help="run every item and every ns-3 run again instead of reading back what the "
        "stores under --store hold (their records are written again)",
    )
    r.add_argument(
        "--store",
        default=None,
        metavar="DIR",
        help="directory of the stores of item records and ns-3 runs (default: OUT/.cache; "
        "$FLUIDNET_PACKET_STORE, if set, holds the ns-3 runs)",
    )
    return p


def _jobs(text: str) -> int:
    from .papers.parallel import default_jobs

    if text == "auto":
        return default_jobs()
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of jobs (or 'auto')") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give at least 1 job (or 'auto')")
    return n


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    args = _parser().parse_args(argv)
    if args.command == "reproduce":
        import matplotlib

        matplotlib.use("Agg")
        from .errors import FluidnetError
        from .papers.registry import papers, reproduce

        if args.list:
            for key, pap in papers().items():
                print(f"{key}: {pap.title}")
                for name, item in pap.items.items():
                    print(f"    {key}:{name:<24} {item.title}")
            return 0
        names = [] if args.all else args.names
        try:
            report = reproduce(
                *names,
                out=args.out,
                quick=args.quick,
                jobs=args.jobs,
                reuse=not args.rerun,
                store=args.store,
                scheduler=args.scheduler,
            )
        except KeyError as exc:
            print(f"fluidnet reproduce: {exc.args[0]}", file=sys.stderr)
            return 2
        except FluidnetError as exc:  # e.g. a symbolic link planted in the output directory
            print(f"fluidnet reproduce: {exc}", file=sys.stderr)
            return 2
        return 0 if report.ok else 1
    return 2  # pragma: no cover - argparse enforces the command


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
