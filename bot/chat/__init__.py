"""The chat: the gateway that answers every message once, the owner's decisions, chat commands.

The message path runs through here: adapter → gateway → run → reply → outbox. Imports the
layers below (``delivery``, ``access``, ``media``, ``tools``, ``models``, ``config``) and
``graphs``; never ``adapters`` (they import it) nor ``cli``.
"""
