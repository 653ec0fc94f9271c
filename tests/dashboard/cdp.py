"""A headless Debian chromium driven over the Chrome DevTools Protocol (its websocket).

No test tool may download a browser here, so this speaks CDP itself with aiohttp: launch
``chromium --headless --remote-debugging-port=0``, read the DevTools address it prints, open a
page target and send it commands (navigate, evaluate JavaScript, screenshot).

Usage::

    browser = Chromium.launch(tmp_path)               # sync: a process for the test module
    async with browser.page() as page:
        await page.goto("http://127.0.0.1:8765/")
        await page.wait_for("document.body.dataset.ready === '1'")
        rows = await page.evaluate("document.querySelectorAll('tr.run').length")
        await page.screenshot(Path("test-artifacts/runs.png"))
    browser.close()
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import queue
import re
import shutil
import subprocess
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
         "--hide-scrollbars", "--mute-audio", "--remote-debugging-port=0"]
LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
START_TIMEOUT_S = 30.0


class BrowserError(RuntimeError):
    """Chromium did not start, or a DevTools command failed (the message says which)."""


class Chromium:
    """One headless chromium process and its browser-level DevTools websocket address."""

    def __init__(self, process: subprocess.Popen[str], ws_url: str) -> None:
        self.process, self.ws_url = process, ws_url

    @classmethod
    def launch(cls, profile: Path, timeout: float = START_TIMEOUT_S) -> Chromium:
        """Start chromium with a fresh profile; returns once DevTools is listening."""
        if CHROMIUM is None:
            raise BrowserError("chromium is not installed (`make browser` installs it)")
        process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:  # keep reading stderr so chromium never blocks on a full pipe
            assert process.stderr is not None
            for line in process.stderr:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        seen: list[str] = []
        try:
            while True:
                line = lines.get(timeout=timeout)
                if line is None:
                    raise BrowserError("chromium exited before DevTools listened:\n"
                                       + "".join(seen[-20:]))
                seen.append(line)
                if match := LISTENING.search(line):
                    return cls(process, match.group(1))
        except (queue.Empty, BrowserError) as exc:
            process.kill()
            process.wait()
            if isinstance(exc, queue.Empty):
                raise BrowserError(f"chromium did not open DevTools within {timeout}s") from exc
            raise

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    @contextlib.asynccontextmanager
    async def page(self, width: int = 1400, height: int = 900) -> AsyncIterator[Page]:
        """A new tab (closed afterwards), its viewport set to ``width`` x ``height``."""
        async with aiohttp.ClientSession() as http, http.ws_connect(
                self.ws_url, max_msg_size=0) as ws:
            link = _Link(ws)
            reader = asyncio.create_task(link.read())
            try:
                target = await link.send("Target.createTarget", {"url": "about:blank"})
                attached = await link.send("Target.attachToTarget",
                                           {"targetId": target["targetId"], "flatten": True})
                page = Page(link, attached["sessionId"])
                await page.send("Page.enable")
                await page.send("Runtime.enable")
                await page.send("Emulation.setDeviceMetricsOverride", {
                    "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
                try:
                    yield page
                finally:
                    await link.send("Target.closeTarget", {"targetId": target["targetId"]})
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader


class _Link:
    """Request/response matching over one DevTools websocket; also collects console errors."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws, self.ids = ws, itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.errors: list[str] = []  # exceptions thrown in the page and console.error lines

    async def send(self, method: str, params: dict[str, Any] | None = None,
                   session: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        number = next(self.ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        answer = self.waiting[number] = asyncio.get_running_loop().create_future()
        await self.ws.send_str(json.dumps(message))
        try:
            reply = await asyncio.wait_for(answer, timeout)
        finally:
            self.waiting.pop(number, None)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def read(self) -> None:
        async for frame in self.ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            if (future := self.waiting.get(message.get("id", -1))) and not future.done():
                future.set_result(message)
            elif message.get("method") == "Runtime.exceptionThrown":
                details = message["params"]["exceptionDetails"]
                self.errors.append(str(details.get("exception", {}).get("description")
                                       or details.get("text")))
            elif message.get("method") == "Runtime.consoleAPICalled":
                params = message["params"]
                if params.get("type") == "error":
                    self.errors.append(" ".join(str(a.get("value", a.get("description")))
                                                for a in params.get("args", [])))


class Page:
    """One tab: navigate, run JavaScript, wait for a condition, take a screenshot."""

    def __init__(self, link: _Link, session: str) -> None:
        self.link, self.session = link, session

    @property
    def errors(self) -> list[str]:
        """JavaScript exceptions and console errors seen so far."""
        return self.link.errors

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.link.send(method, params, self.session)

    async def goto(self, url: str) -> None:
        result = await self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"navigating to {url}: {result['errorText']}")

    async def evaluate(self, expression: str, timeout: float = 30.0) -> Any:
        """The value of a JavaScript expression (promises are awaited)."""
        result = await self.link.send("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True},
            self.session, timeout=timeout + 5)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(str(details.get("exception", {}).get("description")
                                   or details.get("text")))
        return result["result"].get("value")

    async def wait_for(self, condition: str, timeout: float = 15.0) -> Any:
        """Poll ``condition`` inside the page (every 25 ms) until truthy; fail at the deadline."""
        script = f"""new Promise((resolve) => {{
            const deadline = Date.now() + {timeout * 1000:.0f};
            const check = () => {{
                let value = null;
                try {{ value = ({condition}); }} catch (error) {{ value = null; }}
                if (value) resolve(value);
                else if (Date.now() > deadline) resolve(null);
                else setTimeout(check, 25);
            }};
            check();
        }})"""
        value = await self.evaluate(script, timeout=timeout)
        if not value:
            raise BrowserError(f"timed out after {timeout}s waiting for: {condition}"
                               + (f"\npage errors: {self.errors}" if self.errors else ""))
        return value

    async def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """Save a PNG of the page (the whole page by default)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = await self.evaluate("[document.documentElement.scrollWidth, "
                                       "document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
        shot = await self.send("Page.captureScreenshot", params)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path
