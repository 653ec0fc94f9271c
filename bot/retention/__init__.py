"""Retention: what is kept how long (FRONTDESK_KEEP_DAYS), and removing the rest."""
