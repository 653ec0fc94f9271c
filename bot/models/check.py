"""Ask the configured model provider, once, whether it answers, takes the key and which models
it offers (``frontdesk doctor`` and ``frontdesk setup``); through the providers' own SDKs.

One ``models.list()`` call: it costs nothing, needs the key, and names the models, so a wrong
key, an unreachable server and a misspelt model name each get their own sentence. The SDKs
are imported here only, on use, with no retries of their own (a check is asked once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.config.settings import Settings
from bot.models.openai import LOCAL_PLACEHOLDER_KEY

TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ModelList:
    """What the provider offers, or why it could not be asked."""

    names: set[str] = field(default_factory=set)
    problem: str = ""
    fix: str = ""


async def list_models(settings: Settings) -> ModelList:
    """The model names the configured provider offers (``problem`` set when it cannot say)."""
    if settings.model_provider == "anthropic":
        return await _anthropic(settings.anthropic_api_key, settings.anthropic_base_url)
    if settings.model_provider == "openai":
        return await _openai(settings.openai_api_key, settings.openai_base_url)
    return ModelList({"offline-small", "offline-big"})


async def _anthropic(key: str | None, base_url: str | None) -> ModelList:
    import anthropic

    if not key:
        return ModelList(problem="ANTHROPIC_API_KEY is not set",
                         fix="create a key at console.anthropic.com → API Keys")
    client = anthropic.AsyncAnthropic(api_key=key, base_url=base_url, timeout=TIMEOUT_S,
                                      max_retries=0)
    try:
        async with client:
            return ModelList({model.id async for model in client.models.list(limit=1000)})
    except anthropic.AuthenticationError:
        return ModelList(problem="Anthropic refused ANTHROPIC_API_KEY",
                         fix="copy the key again (console.anthropic.com → API Keys)")
    except anthropic.APIConnectionError:
        return ModelList(problem="Anthropic is unreachable",
                         fix="check the network, or ANTHROPIC_BASE_URL")
    except anthropic.APIStatusError as exc:
        return ModelList(problem=f"Anthropic answered {exc.status_code}",
                         fix="try again later; check ANTHROPIC_BASE_URL")


async def _openai(key: str | None, base_url: str | None) -> ModelList:
    import openai

    if not key and not base_url:
        return ModelList(problem="OPENAI_API_KEY is not set",
                         fix="create a key at platform.openai.com → API keys, or set "
                             "OPENAI_BASE_URL for a local server")
    client = openai.AsyncOpenAI(api_key=key or LOCAL_PLACEHOLDER_KEY, base_url=base_url,
                                timeout=TIMEOUT_S, max_retries=0)
    where = "the server at OPENAI_BASE_URL" if base_url else "OpenAI"
    try:
        async with client:
            return ModelList({model.id async for model in client.models.list()})
    except openai.AuthenticationError:
        return ModelList(problem=f"{where} refused OPENAI_API_KEY",
                         fix="copy the key again (or leave it empty for a local server)")
    except openai.APIConnectionError:
        return ModelList(problem=f"{where} is unreachable",
                         fix="start the server, or check OPENAI_BASE_URL (…/v1)")
    except openai.APIStatusError as exc:
        return ModelList(problem=f"{where} answered {exc.status_code}",
                         fix="check OPENAI_BASE_URL (it usually ends in /v1)")
