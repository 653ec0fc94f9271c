"""Settings: read from a mapping, each value parsed and checked; the .env file; logging.

The bottom floor of ``bot``: imports nothing of ``bot``.
"""
