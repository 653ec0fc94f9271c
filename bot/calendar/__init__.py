"""The owner's calendar: an .ics file or URL and a CalDAV calendar (read and written), their
events in a window in one zone, and busy time.

Imports nothing of ``bot`` but ``bot.config``.
"""
