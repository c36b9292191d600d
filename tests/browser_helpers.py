"""A real browser for the tests: Debian's Chromium driven by playwright, and local servers.

Playwright's own browser download does not work offline; the tests drive the system's
Chromium (``apt-get install chromium``, done by ``make test`` where it is missing). Without it,
or without the ``playwright`` package, the browser tests skip with the reason, except in CI
(``CI`` set), where they must run and fail instead.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("FLUIDNET_CHROMIUM", "/usr/bin/chromium"))

#: Flags that work in a container without a display, GPU or network (and a fresh profile:
#: playwright gives every launch a new temporary --user-data-dir).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: Console messages of resources on other hosts, which an offline machine cannot load (Voila
#: asks a CDN for Font Awesome's style sheets); anything else in the console is an error.
OFFLINE = ("net::ERR_NAME_NOT_RESOLVED", "net::ERR_INTERNET_DISCONNECTED")


def require_browser():
    """The ``playwright.sync_api`` module, or skip (fail in CI) naming what is missing."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(
            f"no Chromium at {CHROMIUM} (make test installs it with apt-get as root; "
            "elsewhere: apt-get install chromium, or set FLUIDNET_CHROMIUM)"
        )
    try:
        from playwright import sync_api
    except ImportError:
        sync_api = None
        missing.append("the playwright package is not installed (pip install playwright)")
    if missing:
        reason = "browser tests need a browser: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(reason + " -- in CI they must run")
        pytest.skip(reason)
    return sync_api


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(
    cmd: Sequence[str], url: str, *, env: dict, cwd: Path, log: Path, timeout: float = 60
) -> Iterator[subprocess.Popen]:
    """Run a local server until ``url`` answers (any HTTP status), and stop it afterwards."""
    with open(log, "w") as out:
        proc = subprocess.Popen(list(cmd), env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"{cmd[0]} exited ({proc.returncode}): {log.read_text()}")
                try:
                    urllib.request.urlopen(url, timeout=2).close()
                    break
                except urllib.error.HTTPError:
                    break  # it answers
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{url} did not answer in {timeout} s") from None
                    time.sleep(0.2)
            yield proc
        finally:
            proc.terminate()  # the server shuts its kernels down on SIGTERM
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


class ConsoleErrors(list):
    """The console errors and uncaught exceptions of the pages it watches."""

    def watch(self, page) -> None:
        page.on("pageerror", lambda exc: self.append(f"uncaught: {exc}"))
        page.on(
            "console",
            lambda msg: (
                self.append(f"console: {msg.text} at {page.url}")
                if msg.type == "error" and not any(o in msg.text for o in OFFLINE)
                else None
            ),
        )


def launch(playwright):
    """Headless Chromium from the system, with the flags above."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
