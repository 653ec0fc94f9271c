"""Worker processes that decode untrusted files with hard limits on time and memory.

``await pool.run(function, *args, seconds=…)`` calls a module-level ``function`` in one of a
few long-lived worker processes and gives back its result (or raises the exception it raised).
Each worker caps its own address space (``resource.setrlimit(RLIMIT_AS)``) when it starts, so
a file that decodes into gigabytes fails there with ``MemoryError`` (``WorkerFailed``) instead
of costing the bot its memory; a call that overruns ``seconds``, or is cancelled (the
message's deadline), kills its worker, and the next call starts a fresh one. The event loop
only waits on the worker's pipe (``add_reader``): other chats are answered meanwhile.

Hand-made rather than ``concurrent.futures.ProcessPoolExecutor`` because that pool cannot stop
one call: a running task can be neither cancelled nor timed out, and killing its process
breaks the whole executor (``BrokenProcessPool``) for every other call in it. Here each
worker is one ``multiprocessing`` process with one pipe, so killing it affects only its own
call. Workers are started with ``spawn`` (a fork of a process holding an event loop and
threads is unsafe) and exit by themselves when the bot's end of their pipe closes.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
WORKERS = 2  # files decoded at once; more wait their turn (each may use WORKER_MEMORY_BYTES)
WORKER_MEMORY_BYTES = 1024 * 1024 * 1024  # address space of one worker, libraries included


class WorkerFailed(Exception):
    """The call did not finish: ``reason`` is "time" (overran and was killed), "memory" (hit the
    worker's memory limit) or "crashed" (the worker died)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the worker {'overran its time' if reason == 'time' else reason}")
        self.reason = reason


def serve(connection: Connection, memory_bytes: int) -> None:
    """A worker's life: limit its memory, then run calls until the bot goes away."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except (ImportError, ValueError, OSError):  # not on this platform: time still bounds it
        pass
    while True:
        try:
            function, args = connection.recv()
        except (EOFError, OSError):  # the bot closed its end (or died): nothing more to do
            return
        try:
            outcome: tuple[str, Any] = ("ok", function(*args))
        except MemoryError:
            outcome = ("failed", "memory")
        except Exception as exc:  # handed back to the caller, who decides what it means
            outcome = ("raised", exc)
        try:
            connection.send(outcome)
        except MemoryError:
            connection.send(("failed", "memory"))


class Worker:
    """One worker process and the bot's end of its pipe."""

    def __init__(self, memory_bytes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, theirs = context.Pipe(duplex=True)
        self.process: BaseProcess = context.Process(target=serve, args=(theirs, memory_bytes),
                                                    name="frontdesk-decoder", daemon=True)
        self.process.start()
        theirs.close()

    def alive(self) -> bool:
        return self.process.is_alive()

    def kill(self) -> None:
        """Stop it now (SIGKILL: a decoder stuck in C code ignores anything gentler)."""
        self.process.kill()
        self.process.join(timeout=5)
        self.connection.close()

    async def call(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """Send one call and wait (without blocking the loop) for its outcome."""
        self.connection.send((function, args))
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()
        fd = self.connection.fileno()

        def ready() -> None:
            if not readable.done():
                readable.set_result(None)

        loop.add_reader(fd, ready)
        try:
            await readable
        finally:
            loop.remove_reader(fd)
        try:
            kind, value = self.connection.recv()
        except (EOFError, OSError):
            raise WorkerFailed("crashed") from None
        if kind == "failed":
            raise WorkerFailed(str(value))
        if kind == "raised":
            raise value
        return value


class WorkerPool:
    """At most ``size`` workers; idle ones are kept for the next call (see the docstring)."""

    def __init__(self, size: int = WORKERS, memory_bytes: int = WORKER_MEMORY_BYTES) -> None:
        self.size = size
        self.memory_bytes = memory_bytes
        self.idle: list[Worker] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots = asyncio.Semaphore(size)

    async def run(self, function: Callable[..., T], *args: Any, seconds: float) -> T:
        """``function(*args)`` in a worker, killed past ``seconds`` (``WorkerFailed``)."""
        async with self._slots_of_this_loop():
            worker = self._take()
            finished = False
            try:
                async with asyncio.timeout(seconds):
                    result: T = await worker.call(function, args)
                finished = True
                return result
            except TimeoutError:
                log.warning("a decoder overran %.0f s and was stopped", seconds)
                raise WorkerFailed("time") from None
            except WorkerFailed:
                raise
            except Exception:  # the function's own exception: the worker is fine
                finished = True
                raise
            finally:
                self._give_back(worker, finished)

    def close(self) -> None:
        """Stop the idle workers (busy ones are stopped by their callers)."""
        while self.idle:
            self.idle.pop().kill()

    def _slots_of_this_loop(self) -> asyncio.Semaphore:
        """The semaphore, made anew when the pool is used from another event loop."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._slots = loop, asyncio.Semaphore(self.size)
        return self._slots

    def _take(self) -> Worker:
        while self.idle:
            worker = self.idle.pop()
            if worker.alive():
                return worker
            worker.kill()
        return Worker(self.memory_bytes)

    def _give_back(self, worker: Worker, finished: bool) -> None:
        """Keep a worker that finished its call; kill one that overran, crashed or was
        cancelled mid-call (its answer would arrive for the wrong caller)."""
        if finished and worker.alive():
            self.idle.append(worker)
        else:
            worker.kill()


_shared: WorkerPool | None = None


def shared_pool() -> WorkerPool:
    """The process's one pool (made at the first file: a bot that gets no files starts none)."""
    global _shared
    if _shared is None:
        _shared = WorkerPool()
    return _shared
