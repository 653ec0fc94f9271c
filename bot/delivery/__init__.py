"""What comes in is kept, what leaves is sent once: the inbox, parts, buttons, cursors, the outbox.

Imports ``bot.config``, ``bot.messages``, ``bot.adapters.base`` (the port it sends through)
and ``sqlitedb``; never ``bot.chat``.
"""
