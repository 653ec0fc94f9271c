"""Models behind one small interface, in two roles (small, big), from three providers.

``build_models(settings)`` picks the provider (``settings.model_provider``) and
returns ``Models(small, big)``. Importing this package imports no SDK: the ``anthropic`` or
``openai`` SDK is imported on a model's first call.
"""

from __future__ import annotations

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
    timeout = settings.model_timeout if timeout is None else timeout
    provider = settings.model_provider
    small_default, big_default = DEFAULT_MODELS.get(provider, DEFAULT_MODELS["offline"])
    small_name = settings.small_model or small_default
    big_name = settings.big_model or big_default
    if provider not in {"anthropic", "openai"}:
        return Models(small=OfflineModel(role="small", name=small_name),
                      big=OfflineModel(role="big", name=big_name))
    spend_log = spend_log if spend_log is not None else SpendLog.open(settings)
    prices = load_prices(settings)

    def client(name: str) -> ProviderClient:
        if provider == "anthropic":
            return AnthropicClient(name=name, api_key=settings.anthropic_api_key,
                                   base_url=settings.anthropic_base_url, timeout=timeout)
        return OpenAIClient(name=name, api_key=settings.openai_api_key,
                            base_url=settings.openai_base_url, timeout=timeout)

    def guarded(name: str, role: str) -> GuardedModel:
        return GuardedModel(client(name), role=role, prices=prices, spend_log=spend_log,
                            budget_usd=settings.daily_budget_usd, policy=policy)

    return Models(small=guarded(small_name, "small"), big=guarded(big_name, "big"))
