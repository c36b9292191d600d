"""Run every benchmark: each ``benchmarks/bench_*.py`` defines ``main() -> dict``.

Usage: ``make bench`` or ``.venv/bin/python benchmarks/run.py [name ...]``. Results are printed
by each benchmark and collected into ``benchmarks/results/latest.json``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str]) -> int:
    paths = sorted(HERE.glob("bench_*.py"))
    if argv:
        paths = [p for p in paths if p.stem.removeprefix("bench_") in argv or p.stem in argv]
    results: dict[str, object] = {}
    status = 0
    for path in paths:
        print(f"\n=== {path.stem} ===", flush=True)
        t0 = time.perf_counter()
        try:
            results[path.stem] = _load(path).main()
        except Exception as exc:  # noqa: BLE001 - report and continue with the others
            print(f"{path.stem} failed: {type(exc).__name__}: {exc}", flush=True)
            results[path.stem] = {"error": f"{type(exc).__name__}: {exc}"}
            status = 1
        print(f"({path.stem}: {time.perf_counter() - t0:.1f} s)", flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=1, default=str))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
