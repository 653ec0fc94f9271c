"""Frontdesk as a systemd service: the unit file it installs and the readiness it reports."""
