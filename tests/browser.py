"""A headless Chromium driven over the DevTools protocol on a pipe (no port, no network).

Chromium is not a pip package: no package on PyPI ships a headless Chromium binary that
installs without a download at run time, so the browser tests use the system's Chromium
(Debian: ``apt-get install chromium``) or the one ``FLOWC_CHROMIUM`` names, and skip with
that reason when there is none -- unless ``FLOWC_REQUIRE_BROWSER=1``, when a missing browser
fails them (for a CI that installs it).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio",
         "--remote-debugging-pipe"]
WIDTH, HEIGHT = 1400, 900
TIMEOUT = 60.0


def find_chromium() -> str:
    exe = os.environ.get("FLOWC_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome",
                                       "chrome")) if p), None)
    if exe:
        return exe
    reason = ("no Chromium for the browser tests (apt-get install chromium, or set "
              "FLOWC_CHROMIUM); no pip package ships one")
    if os.environ.get("FLOWC_REQUIRE_BROWSER") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


class Browser:
    """One Chromium process with one page; commands go to fd 3, answers come on fd 4."""

    def __init__(self, exe: str, profile: Path) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()

        def wire() -> None:  # in the child: the pipe ends become fds 3 and 4
            a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 100)
            b = fcntl.fcntl(res_w, fcntl.F_DUPFD, 100)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=wire)
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._next = 0
        self._session: str | None = None
        self.errors: list[str] = []  # uncaught exceptions and console errors of the page
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self.send("Target.attachToTarget",
                                      {"targetId": target, "flatten": True})["sessionId"]
            self.send("Runtime.enable")
            self.send("Page.enable")
            self.resize(WIDTH, HEIGHT)
        except BaseException:
            self.close()  # never leave a browser behind
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._session = None
            self.send("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._cmd_w, self._res_r):
            try:
                os.close(fd)
            except OSError:
                pass

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if self._session:
            msg["sessionId"] = self._session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._res_r], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._res_r, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def _event(self, msg: dict[str, Any]) -> None:
        if msg.get("method") == "Runtime.exceptionThrown":
            d = msg["params"]["exceptionDetails"]
            self.errors.append(d.get("exception", {}).get("description") or d.get("text", ""))
        elif msg.get("method") == "Runtime.consoleAPICalled" and \
                msg["params"].get("type") == "error":
            self.errors.append(str(msg["params"].get("args")))

    def load(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + TIMEOUT
        while not self.eval("document.readyState === 'complete' && "
                            "document.body && document.body.dataset.ready === '1'"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading: {self.errors}")
            time.sleep(0.05)

    def eval(self, expression: str) -> Any:
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) at the middle of the element."""
        where = self.eval(f"""(() => {{
            const e = document.querySelector({json.dumps(selector)});
            if (!e) return null;
            e.scrollIntoView({{block: "center", inline: "center"}});
            const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        if where is None:
            raise LookupError(f"nothing matches {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": where[0], "y": where[1],
                                                   "button": "left", "clickCount": 1})

    def resize(self, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self) -> bytes:
        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
