"""Who may write: the allowlist, the people pairing let in, and what strangers get.

Imports ``bot.config``, ``bot.delivery``, ``bot.adapters.base`` and ``sqlitedb``; never
``bot.chat``.
"""
