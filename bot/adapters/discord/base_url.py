"""Point discord.py at ``DISCORD_BASE_URL`` (a proxy or a local test server) or back at Discord.

discord.py has no setting for this. REST URLs are built from the class attribute
``discord.http.Route.BASE`` (webhook and interaction calls use the same ``Route``), and a
plain ``Client`` never asks ``GET /gateway/bot``: it connects to
``DiscordWebSocket.DEFAULT_GATEWAY`` and later resumes at READY's ``resume_gateway_url``
(falling back to ``DEFAULT_GATEWAY`` after an invalid session). So both class attributes are
set here, once, before the client logs in; they are process-wide.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import discord.gateway
import discord.http
import yarl

DEFAULT_API_VERSION_PATH = "/api/v10"


@dataclass(frozen=True)
class DiscordEndpoints:
    """Where discord.py sends REST calls and opens its gateway websocket."""

    rest_base: str
    gateway: str


OFFICIAL = DiscordEndpoints(rest_base=discord.http.Route.BASE,
                            gateway=str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY))


def endpoints_for(base_url: str | None) -> DiscordEndpoints:
    """The endpoints for a ``DISCORD_BASE_URL`` value; Discord's own when it is unset.

    ``http://127.0.0.1:8080/api/v10`` gives that REST base and ``ws://127.0.0.1:8080/``; a
    base without a path gets ``/api/v10``, and ``https`` gives ``wss``.
    """
    if base_url is None or not base_url.strip():
        return OFFICIAL
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"DISCORD_BASE_URL={base_url!r} is not an http(s) URL; "
            "use the REST base, e.g. http://127.0.0.1:8080/api/v10."
        )
    path = parts.path.rstrip("/") or DEFAULT_API_VERSION_PATH
    websocket_scheme = "wss" if parts.scheme == "https" else "ws"
    return DiscordEndpoints(rest_base=f"{parts.scheme}://{parts.netloc}{path}",
                            gateway=f"{websocket_scheme}://{parts.netloc}/")


def current_endpoints() -> DiscordEndpoints:
    """What discord.py will use right now."""
    return DiscordEndpoints(rest_base=discord.http.Route.BASE,
                            gateway=str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY))


def use_endpoints(endpoints: DiscordEndpoints) -> DiscordEndpoints:
    """Make discord.py use ``endpoints``; return the previous ones (to restore in tests)."""
    previous = current_endpoints()
    discord.http.Route.BASE = endpoints.rest_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(endpoints.gateway)
    return previous


def point_discord_at(base_url: str | None) -> DiscordEndpoints:
    """Apply ``DISCORD_BASE_URL`` (None: Discord itself); return the previous endpoints."""
    return use_endpoints(endpoints_for(base_url))
