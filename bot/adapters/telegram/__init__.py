"""Telegram: python-telegram-bot between Telegram and the gateway (intake, format, files, start).

Imports the gateway and the layers below it; nothing imports this package but the CLI.
"""
