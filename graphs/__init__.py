"""Frontdesk's graph engine, node factories and workflows; imports nothing from `bot/`."""
