"""What leaves: the durable ledger (inbox, outbox, buttons), the outbox, the owner notifier.

Imports ``bot.config``, ``bot.adapters.base`` and ``sqlitedb``; never ``bot.chat``.
"""
