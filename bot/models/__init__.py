"""Models behind one small interface, in two roles (small, big), from three providers.

``build_models(settings)`` picks the provider (``settings.model_provider``) and
returns ``Models(small, big)``. Importing this package imports no SDK: the ``anthropic`` or
``openai`` SDK is imported on a model's first call.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.config.settings import Settings
from bot.models.anthropic import AnthropicClient
from bot.models.base import (
    Message,
    Model,
    ModelError,
    Models,
    Observer,
    Reply,
    ToolCall,
    ToolSpec,
    Usage,
)
from bot.models.costs import SpendLog, load_prices
from bot.models.guarded import GuardedModel, ProviderClient
from bot.models.offline import OfflineModel, classify_offline, parse_intent
from bot.models.openai import OpenAIClient
from graphs.graph import RetryPolicy

__all__ = [
    "DEFAULT_MODELS",
    "GuardedModel",
    "Message",
    "Model",
    "ModelError",
    "Models",
    "Observer",
    "OfflineModel",
    "Reply",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "build_models",
    "classify_offline",
    "model_maker",
    "parse_intent",
]

# (small, big) per provider when FRONTDESK_SMALL_MODEL / FRONTDESK_BIG_MODEL are not set.
DEFAULT_MODELS: dict[str, tuple[str, str]] = {
    "anthropic": ("claude-haiku-4-5", "claude-sonnet-4-6"),
    "openai": ("gpt-4.1-mini", "gpt-4.1"),
    "offline": ("offline-small", "offline-big"),
}


def build_models(settings: Settings, *, spend_log: SpendLog | None = None,
                 policy: RetryPolicy | None = None, timeout: float | None = None) -> Models:
    """The small and big models for the configured provider.

    Every call to a real provider, small or big, reserves its worst case in ``spend_log``
    (opened on the settings' database when not given) against ``settings.daily_budget_usd``
    and settles to its real cost. Each attempt is bounded by ``timeout`` seconds (default
    ``settings.model_timeout``, ``FRONTDESK_MODEL_TIMEOUT``).
    """
    small_default, big_default = DEFAULT_MODELS.get(settings.model_provider,
                                                    DEFAULT_MODELS["offline"])
    make = model_maker(settings, spend_log=spend_log, policy=policy, timeout=timeout)
    return Models(small=make(settings.small_model or small_default, "small"),
                  big=make(settings.big_model or big_default, "big"))


def model_maker(settings: Settings, *, spend_log: SpendLog | None = None,
                policy: RetryPolicy | None = None,
                timeout: float | None = None) -> Callable[[str, str], Model]:
    """A function making a model of the configured provider by (name, role): what
    ``build_models`` makes its two with, and ``/model`` a chat's preset (``bot.models.choices``)
    with. The models it makes share one spend log and price table."""
    timeout = settings.model_timeout if timeout is None else timeout
    provider = settings.model_provider
    if provider not in {"anthropic", "openai"}:
        return lambda name, role: OfflineModel(role=role, name=name)
    log = spend_log if spend_log is not None else SpendLog.open(settings)
    prices = load_prices(settings)

    def client(name: str) -> ProviderClient:
        if provider == "anthropic":
            return AnthropicClient(name=name, api_key=settings.anthropic_api_key,
                                   base_url=settings.anthropic_base_url, timeout=timeout)
        return OpenAIClient(name=name, api_key=settings.openai_api_key,
                            base_url=settings.openai_base_url, timeout=timeout)

    def guarded(name: str, role: str) -> Model:
        return GuardedModel(client(name), role=role, prices=prices, spend_log=log,
                            budget_usd=settings.daily_budget_usd, policy=policy)

    return guarded
