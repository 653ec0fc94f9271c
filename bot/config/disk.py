"""A full disk told apart from every other error, wherever it surfaces.

A full filesystem reaches Frontdesk in two shapes: ``OSError`` with ``ENOSPC`` (or ``EDQUOT``,
a user's quota) from a file write, and ``sqlite3.OperationalError`` "database or disk is full"
(``SQLITE_FULL``) from the database. Either may be wrapped in another error on its way up
(``raise ... from``), so the causes are followed too, and so is the error a storage error was
raised while handling (a ``ROLLBACK`` that failed after the full disk's error). Every floor
asks the same question (the log file, an adapter's intake, the media pipeline, the answerer),
hence the ground floor.
"""

from __future__ import annotations

import errno
import sqlite3

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
SQLITE_FULL = 13  # sqlite3.SQLITE_FULL, which typeshed does not list on every Python


def disk_full(error: BaseException | None) -> bool:
    """Whether ``error`` (or an error it was raised from) says the disk is full."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in FULL_ERRNOS:
            return True
        if isinstance(error, sqlite3.Error) and (
                getattr(error, "sqlite_errorcode", None) == SQLITE_FULL
                or "database or disk is full" in str(error)):
            return True
        storage = isinstance(error, OSError | sqlite3.Error)
        error = error.__cause__ or (error.__context__ if storage else None)
    return False
