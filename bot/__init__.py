"""Frontdesk's bot side: settings, models, tools, the gateway and the chat adapters."""
