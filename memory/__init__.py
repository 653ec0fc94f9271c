"""Frontdesk's SQLite database: migrations, notes and chat history in FTS5."""
