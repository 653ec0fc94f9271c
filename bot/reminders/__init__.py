"""Reminders: durable records, the timer that fires them, and the wake-up from other processes.

Imports ``bot.tools`` (the loop a task runs), ``bot.models``, ``bot.calendar``, ``bot.config``
and ``graphs``; never ``bot.chat``.
"""
