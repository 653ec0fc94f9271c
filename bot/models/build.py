"""The models concern, built: the small model, each chat's big model, and what they cost.

``build`` is what the assembler (``bot.app``) calls: the configured provider's two models (or
the ones a test passes in), the big one made each chat's ``/model`` choice
(``bot.models.choices``), over one spend log that holds every call against the daily budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config.settings import Settings
from bot.models import Models, build_models, model_maker
from bot.models.base import Model
from bot.models.choices import ChatBigModel, ModelChoices
from bot.models.costs import SpendLog
from sqlitedb.database import Database


@dataclass(frozen=True)
class ChatModels:
    """The two models in their roles, the chats' choices and the spend log."""

    small: Model  # classifies, checks and answers small talk
    big: ChatBigModel  # each chat's /model choice, per call
    choices: ModelChoices  # which preset each chat chose
    spend_log: SpendLog  # each model call's cost, and today's spend


def build(settings: Settings, db: Database, given: Models | None = None) -> ChatModels:
    """The configured models over ``db``'s spend log, or ``given`` (a test's fakes)."""
    spend_log = SpendLog.open(settings, db)
    models = given or build_models(settings, spend_log=spend_log)
    choices = ModelChoices(db, settings.model_presets)
    big = ChatBigModel(models.big, choices, model_maker(settings, spend_log=spend_log))
    return ChatModels(models.small, big, choices, spend_log)
