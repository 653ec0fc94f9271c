"""Getting set up: the ``frontdesk setup`` wizard, its probes of the platforms, the doctor.

Loaded only by the CLI commands that use it.
"""
