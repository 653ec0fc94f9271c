"""The doctor's ``email`` lines (beside ``bot.setup.doctor``'s checks, which it runs after)."""

from __future__ import annotations

from bot.setup.doctor import Context, Result


async def check_email(ctx: Context) -> list[Result]:
    """With FRONTDESK_EMAIL_ADDRESS: the IMAP and the SMTP login, each failure naming the
    variable to fix. aioimaplib and aiosmtplib are loaded only then."""
    email = ctx.settings.email if ctx.settings is not None else None
    if email is None:
        return []
    from bot.adapters.email.check import logins

    return [Result("email", ok, detail, fix) for ok, detail, fix in await logins(email)]
