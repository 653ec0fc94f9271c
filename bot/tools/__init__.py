"""Tools: the registry and its policy, the agent loop, approvals, the built-in tools, MCP.

Imports ``bot.models``, ``bot.calendar``, ``bot.config`` and ``graphs``; never ``bot.chat``.
"""
