"""A mail's files, handed to the media pipeline (``bot.media.attachments``) like any platform's.

The intake has the whole mail already (it was under ``FRONTDESK_MAX_FILE_MB``), so each file
``read_mail`` found is kept here in memory and declared as an ``Attachment`` whose ``ref``
names the mail's place (``<UIDVALIDITY>/<UID>/<index>``); the pipeline then fetches it, checks
it against its caps and reads it as it reads a Telegram document or photo. After a restart the
memory is gone: the file is fetched again from the server by that place (the mail is still
there, unmarked, until its answer has left).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.adapters.email.mailbox import Mailbox
from bot.adapters.email.reading import MailFile, read_in_worker
from bot.config.email_settings import EmailSettings
from bot.media.attachments import FileTooLarge
from bot.messages import Attachment, kind_of


class MailFiles:
    """The files of the mails being answered, by their place on the server."""

    def __init__(self, settings: EmailSettings, max_bytes: int) -> None:
        self.settings = settings
        self.max_bytes = max_bytes
        self._kept: dict[str, bytes] = {}

    def keep(self, uidvalidity: str, uid: int,
             files: Sequence[MailFile]) -> tuple[Attachment, ...]:
        """Keep one mail's files; their ``Attachment``s for its ``IncomingMessage``."""
        found: list[Attachment] = []
        for index, file in enumerate(files):
            ref = f"{uidvalidity}/{uid}/{index}"
            self._kept[ref] = file.data
            found.append(Attachment(kind_of(file.mime.lower()), file.mime, len(file.data),
                                    file.name, ref))
        return tuple(found)

    def forget(self, uidvalidity: str, uid: int) -> None:
        """The mail is answered: its files are not needed any more."""
        prefix = f"{uidvalidity}/{uid}/"
        for ref in [ref for ref in self._kept if ref.startswith(prefix)]:
            del self._kept[ref]

    async def fetch(self, attachment: Attachment, max_bytes: int) -> bytes:
        """The file's bytes: kept since the intake read the mail, else read from the server."""
        data = self._kept.get(attachment.ref)
        if data is None:
            data = await self._from_server(attachment.ref)
        if len(data) > max_bytes:
            raise FileTooLarge(len(data))
        return data

    async def _from_server(self, ref: str) -> bytes:
        uidvalidity, place = ref.split("/", 1)
        uid, index = place.split("/")
        mailbox = Mailbox(self.settings)
        try:
            await mailbox.open()
            if mailbox.uidvalidity != uidvalidity:
                raise LookupError("the mail's folder was reset: its file is gone")
            raw = await mailbox.whole(int(uid))
        finally:
            await mailbox.close()
        if raw is None:
            raise LookupError("the mail is no longer on the server")
        files = (await read_in_worker(raw, self.max_bytes)).attachments
        if int(index) >= len(files):
            raise LookupError("the mail no longer has that file")
        return files[int(index)].data
