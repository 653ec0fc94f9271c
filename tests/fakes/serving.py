"""Run a fake aiohttp server on loopback, in the test's event loop or in a thread of its own.

A fake subclasses ``LoopbackServer``, builds its routes in ``build_app`` and calls
``self._notify()`` (with ``self._lock`` held) whenever its state changes; tests then wait for a
condition with ``await server.wait_for(predicate)`` or, from a plain thread,
``server.wait_for_sync(predicate)``: both re-check the predicate on every change until a
deadline, so nothing waits by sleeping.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from aiohttp import web

T = TypeVar("T")


class LoopbackServer:
    """Start/stop plumbing and change notification shared by the fake servers."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._closing = False
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def build_app(self) -> web.Application:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        """Serve in the running event loop (the port is known when this returns)."""
        self._closing = False
        self._runner = web.AppRunner(self.build_app(), access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.port = self._runner.addresses[0][1]
        self._loop = asyncio.get_running_loop()

    async def stop(self) -> None:
        with self._lock:
            self._closing = True  # pending long polls see this and answer at once
            self._notify()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self: Any) -> Any:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def start_in_thread(self) -> None:
        """Serve from a background thread with its own loop (for subprocess tests)."""
        ready = threading.Event()
        loop = asyncio.new_event_loop()

        def serve() -> None:
            loop.run_until_complete(self.start())
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=serve, name=type(self).__name__, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start within 10 s")

    def stop_thread(self) -> None:
        if self._thread is None or self._loop is None:
            return
        asyncio.run_coroutine_threadsafe(self.stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None

    def __enter__(self: Any) -> Any:
        self.start_in_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_thread()

    async def wait_for(self, predicate: Callable[[], T], timeout: float = 5.0) -> T:
        """Await until predicate() is truthy, re-checked on every change; return its value.

        Works from any event loop, whether the server runs in it or in its own thread; the
        predicate runs with the server's lock held. Raises TimeoutError after ``timeout``.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            event = asyncio.Event()
            with self._lock:
                value = predicate()
                if value:
                    return value
                if loop.time() >= deadline:
                    raise TimeoutError(f"condition not met within {timeout} s")
                self._async_waiters.append((loop, event))
            try:
                await asyncio.wait_for(event.wait(), deadline - loop.time())
            except TimeoutError:
                pass  # one last check above, then TimeoutError
            finally:
                with self._lock:
                    self._async_waiters.remove((loop, event))

    def wait_for_sync(self, predicate: Callable[[], T], timeout: float = 5.0) -> T:
        """Block until predicate() is truthy; only for threads the server does not run in."""
        if self._thread is None or threading.current_thread() is self._thread:
            raise RuntimeError("wait_for_sync needs start_in_thread(); else `await wait_for`")
        deadline = time.monotonic() + timeout
        with self._changed:
            while not (value := predicate()):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"condition not met within {timeout} s")
                self._changed.wait(remaining)
            return value

    def _notify(self) -> None:
        """Wake every waiter (call with the lock held)."""
        self._changed.notify_all()
        for loop, event in self._async_waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)
