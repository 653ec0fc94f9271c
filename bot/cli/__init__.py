"""The ``frontdesk`` command line: ``main`` parses and dispatches, one module per subcommand.

Subcommand modules are imported lazily, so ``frontdesk --help`` loads no SDK. The top floor:
it may import every folder.
"""
