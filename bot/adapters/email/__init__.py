"""Email, the third chat platform: the desk's own mailbox read by IMAP and answered by SMTP."""
