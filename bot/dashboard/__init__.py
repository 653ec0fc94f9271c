"""The local web page of runs: an aiohttp server, what it reads from the run log, the SVG.

Imports ``graphs``, ``bot.config`` and ``bot.models`` (costs); loaded only when served.
"""
