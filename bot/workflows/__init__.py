"""The workflows wired to the bot's services: triage, the plain loop, drafting, the briefing.

``graphs/`` holds each workflow's recipe and knows nothing of the bot; ``build`` here hands each
its services (models, tools, memory, the owner's calendar, the notifier) and registers them
with the durable run layer. Imports ``bot.config``, ``bot.calendar``, ``bot.models`` and
``bot.tools``; never ``bot.chat``.
"""
