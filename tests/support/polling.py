"""Waiting for what another thread or process makes true, where the test has no event to
wait on (a file a worker writes, a port a server opens, a row a thread commits): the
condition is read every ``interval`` until it holds, or the deadline fails the test. These two
are the suite's only polls; a predicate may raise to fail at once (a process that died)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 10.0, *, what: str = "",
               interval: float = 0.02) -> T:
    """``predicate()``'s first true value; TimeoutError (naming ``what``) past ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what or 'the condition'} did not hold within {timeout:g} s")
        time.sleep(interval)
    return value


async def until(predicate: Callable[[], T], timeout: float = 10.0) -> T:
    """Poll ``predicate`` until it holds, with a deadline (the event loop runs between)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (result := predicate()):
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)
    return result
