"""Email: the front desk's own inbox, a chat platform beside Telegram and Discord."""
