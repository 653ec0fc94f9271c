"""Implementations of the `frontdesk` CLI subcommands, one module each, imported lazily."""
