"""Discord: discord.py between Discord and the gateway (intake, format, files, buttons).

Imports the ground floor (``bot.messages``, ``bot.config``) and ``bot.media``: it is handed the
desk's inbound port, never imports ``bot.chat``; nothing imports this package but the CLI.
"""
