"""A file downloaded as a stream, stopped as soon as it passes the byte limit.

``download_capped(url, max_bytes)`` GETs ``url`` with httpx and keeps at most ``max_bytes``:
a ``Content-Length`` over the limit is refused before the body is read, and a body that runs
past the limit (a size that lied, or none declared) is cut off there, so a file never costs
more than the limit in memory or time on the wire. Both platforms' own helpers
(python-telegram-bot's ``File.download_as_bytearray``, discord.py's ``Attachment.read``) read
the whole body first, which is why the adapters use this instead.
"""

from __future__ import annotations

import httpx

from bot.media.attachments import FileTooLarge

CHUNK_BYTES = 64 * 1024
TIMEOUT = httpx.Timeout(30.0, connect=10.0)


async def download_capped(url: str, max_bytes: int, *,
                          headers: dict[str, str] | None = None) -> bytes:
    """The body at ``url``; ``FileTooLarge`` once it is known or found to pass ``max_bytes``.
    HTTP errors raise ``httpx.HTTPStatusError`` (whose text names no secret: callers log the
    exception's type only, since a URL may carry a token)."""
    # identity: a compressed body is not inflated here, where one chunk could become gigabytes
    asked = {"Accept-Encoding": "identity", **(headers or {})}
    async with (httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=True) as client,
                client.stream("GET", url, headers=asked) as response):
        response.raise_for_status()
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise FileTooLarge(int(declared))
        body = bytearray()
        async for chunk in response.aiter_raw(CHUNK_BYTES):
            body += chunk
            if len(body) > max_bytes:
                raise FileTooLarge(None)
    return bytes(body)
