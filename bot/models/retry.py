"""The one retry layer for model calls: which failures are transient; backoff with retry-after.

The SDK clients are built with ``max_retries=0`` and the engine sees only final, non-transient
errors, so this is the only place a model call is ever retried.
"""

from __future__ import annotations

import asyncio
import email.utils
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from bot.models.base import ModelError
from graphs.graph import RetryPolicy

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

TRANSIENT_STATUSES: frozenset[int] = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


class ProviderFailure(ModelError):
    """A provider call failed; ``retry_after`` is the server's requested wait, if it gave one.

    ``timed_out`` marks a time-out (retried once only, so the total time stays bounded);
    ``maybe_billed`` a failure after the provider may have done, and billed, the work (a
    time-out, an unreadable reply): its budget hold is kept at the worst case.
    """

    def __init__(self, user_message: str, *, transient: bool, status: int | None = None,
                 retry_after: float | None = None, timed_out: bool = False,
                 maybe_billed: bool = False) -> None:
        super().__init__(user_message, transient=transient, status=status)
        self.retry_after = retry_after
        self.timed_out = timed_out
        self.maybe_billed = maybe_billed or timed_out


def transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP library's connection errors, which a stream being read raises unwrapped (the
    SDKs have used ``httpx`` and its successor ``httpx2``: whichever is loaded)."""
    loaded = [sys.modules.get(name) for name in ("httpx2", "httpx")]
    return tuple(module.TransportError for module in loaded
                 if module is not None and hasattr(module, "TransportError"))


def broken_off(label: str) -> ProviderFailure:
    """A streamed answer whose connection broke off midway: tried again (it may be billed)."""
    return ProviderFailure(f"The {label} API's answer broke off midway.", transient=True,
                           maybe_billed=True)


MODEL_RETRY = RetryPolicy(max_attempts=3, delay=0.5, backoff=2.0, max_delay=8.0)


async def call_with_retry(call: Callable[[], Awaitable[T]], policy: RetryPolicy, *,
                          sleep: Sleep = asyncio.sleep) -> T:
    """Run ``call``, retrying transient ``ProviderFailure``s per ``policy``; re-raise the last.

    A time-out is transient once: a second one gives up, so a hung provider costs at most two
    time-outs (plus one backoff) however many attempts the policy allows.
    """
    attempt, timeouts = 1, 0
    while True:
        try:
            return await call()
        except ProviderFailure as failure:
            timeouts += failure.timed_out
            if not failure.transient or attempt >= policy.max_attempts or timeouts > 1:
                raise
            wait = policy.wait_before(attempt, failure.retry_after)
            if wait is None:
                raise
            await sleep(wait)
            attempt += 1


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def failure_from_sdk(exc: Exception, sdk: Any, *, label: str, key_env: str,
                     model: str) -> ProviderFailure:
    """Translate an ``anthropic``/``openai`` SDK exception (same shapes) into a ProviderFailure.

    The messages are ours, one sentence each, and never include the key or the raw body.
    """
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderFailure(f"The {label} API timed out.", transient=True, timed_out=True)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderFailure(f"The {label} API could not be reached.", transient=True)
    if isinstance(exc, sdk.APIResponseValidationError):
        return malformed(label)
    if isinstance(exc, sdk.APIStatusError):
        headers = exc.response.headers
        return failure_from_status(int(exc.status_code), label=label, key_env=key_env,
                                   model=model, retry_after=parse_retry_after(headers),
                                   should_retry=headers.get("x-should-retry"))
    return ProviderFailure(f"The {label} API call failed ({type(exc).__name__}).",
                           transient=False)


def failure_from_status(status: int, *, label: str, key_env: str, model: str,
                        retry_after: float | None = None,
                        should_retry: str | None = None) -> ProviderFailure:
    """Which HTTP statuses are worth retrying, and what to tell the user about each."""
    transient = status in TRANSIENT_STATUSES or status >= 500
    if should_retry in {"true", "false"}:  # the server's own hint wins
        transient = should_retry == "true"
    messages = {
        400: f"The {label} API rejected the request as invalid.",
        401: f"The {label} API rejected the key; check {key_env}.",
        402: f"The {label} account has run out of credit.",
        403: f"The {label} API refused this key access to model {model}.",
        404: f"The {label} API does not know the model {model}.",
        429: f"The {label} API is rate-limiting requests.",
        529: f"The {label} API is overloaded.",
    }
    default = (f"The {label} API had a server error (HTTP {status})." if status >= 500
               else f"The {label} API refused the request (HTTP {status}).")
    return ProviderFailure(messages.get(status, default), transient=transient, status=status,
                           retry_after=retry_after)


def malformed(label: str) -> ProviderFailure:
    """A reply we could not read: retrying the same request would not fix it."""
    return ProviderFailure(f"The {label} API sent a reply that could not be read.",
                           transient=False, maybe_billed=True)
