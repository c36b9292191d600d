"""Starting test processes together (shared by the compile-cache tests)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def run_together(code: str, env: dict[str, str], tmp_path: Path, n: int = 2, timeout=300):
    """Run ``n`` processes of ``code`` released at the same moment; their (stdout, stderr).

    ``code`` gets two arguments: a file to create when it is ready, and a file whose
    appearance releases it (so the processes race on what follows).
    """
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path / f"ready{i}"), str(go)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(n)):
        assert time.monotonic() < deadline, "the processes did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    go.write_text("")
    outs = [p.communicate(timeout=timeout) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    return outs
