"""Keeping the data: backups of FRONTDESK_HOME, restores, and the database's safe upgrade.

``archive`` writes and reads one backup file, ``restore`` puts one back, ``lock`` tells
whether a bot is running on a home, ``upgrade`` checks the database before any command and
applies pending migrations after a backup.
"""
