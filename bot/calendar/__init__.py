"""The owner's calendar: read an .ics file or URL and list events in a window, in one zone.

Imports nothing of ``bot`` but ``bot.config``.
"""
