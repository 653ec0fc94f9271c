"""Fakes that implement the real interfaces: a scripted model and loopback API servers.

``tests.fakes.model.FakeModel`` stands in for ``bot.models.Model``; ``openai_server`` and
``anthropic_server`` are real HTTP servers on 127.0.0.1 speaking those APIs' wire formats.
"""
