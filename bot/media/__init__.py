"""A message's files made readable: documents to text, photos for vision, voice to text.

Imports ``bot.config``, ``bot.models`` and ``bot.messages``; never ``bot.chat``.
"""
