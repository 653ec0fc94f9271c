"""Discord: discord.py between Discord and the gateway (intake, format, files, buttons).

Imports the gateway and the layers below it; nothing imports this package but the CLI.
"""
