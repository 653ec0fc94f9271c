"""Who may write: the allowlist, the people pairing let in, and what strangers get.

Imports ``bot.config``, ``bot.delivery``, ``bot.messages`` and ``sqlitedb``; never
``bot.chat``.
"""
