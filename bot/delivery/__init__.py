"""What leaves: the durable ledger (inbox, outbox, buttons), the outbox, the owner notifier.

Imports ``bot.config``, ``bot.messages`` and ``sqlitedb``; never ``bot.chat``.
"""
