"""The message path: the gateway, turns and bursts, the handlers in order, the decisions.

adapter → (``bot.messages.Inbound``) gateway → turns → answering → handlers → run → reply →
outbox. Imports the layers below (``delivery``, ``access``, ``workflows``, ``meetings``,
``reminders``, ``media``, ``tools``, ``models``, ``config``, ``messages``) and ``graphs``;
never ``cli``. The adapters do not import it: the assembler hands them the gateway as their
inbound port.
"""
