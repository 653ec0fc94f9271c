"""Meetings: the owner's rules, free slots, the requests' records and the booking services."""
