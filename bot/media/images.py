"""Make a photo ready for a vision model: opened with Pillow, turned upright, downscaled.

Both providers recommend a long edge of at most 1568 px (Anthropic says larger images are
scaled down on their side anyway, at the cost of latency; OpenAI's high detail tiles at about
that size), and both take JPEG, PNG, WebP and GIF. So an image is kept as it is when it is
already one of those and small enough, else re-encoded: PNG when it has transparency, JPEG
otherwise. An animated GIF is sent as its first frame. Anything Pillow cannot open is an
``UnreadableImage`` with one sentence to show.

A picture is refused by its declared size before anything is decoded: ``Image.open`` reads only
the header, and more than ``MAX_IMAGE_PIXELS`` (a hard limit, far below Pillow's own warning
at 89 megapixels) is a decompression bomb or more than any vision model looks at. What is
kept is downscaled while it is decoded (``thumbnail`` asks JPEG's decoder for a smaller draft)
and only then turned upright, so no full-size copy is ever made. ``bot.media.attachments`` runs
``prepare_image`` in a worker process (``bot.media.workers``) with limits on time and memory.

Pillow is imported when the first photo comes: a bot that only ever gets text never loads it.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image as PillowImage

MAX_EDGE_PX = 1568
SENDABLE = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
JPEG_QUALITY = 85
ORIENTATION_TAG = 0x0112  # EXIF: a phone's photo is often stored sideways with this set
# Every common camera (up to 40 MP) passes; the models see at most 1568 px a side anyway.
MAX_IMAGE_PIXELS = 40_000_000


PIXEL_LIMIT = (f"I take pictures up to {MAX_IMAGE_PIXELS // 1_000_000} megapixels; please "
               "send a smaller one, or send it as a photo.")


class UnreadableImage(Exception):
    """An image that cannot be opened; the message is one sentence for the sender."""


@dataclass(frozen=True)
class PreparedImage:
    """The bytes to send, their MIME type, and the size they have now."""

    data: bytes
    media_type: str
    width: int
    height: int


def prepare_image(data: bytes) -> PreparedImage:
    """The image as a provider should get it (see the module docstring)."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # Pillow's warning limit: ours below it is the refusal
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(data))  # the header only, nothing decoded yet
        with opened:
            refuse_too_many_pixels(*opened.size)
            source_format = opened.format or ""
            animated = bool(getattr(opened, "is_animated", False))
            turned = opened.getexif().get(ORIENTATION_TAG, 1) != 1
            too_big = max(opened.size) > MAX_EDGE_PX
            if source_format in SENDABLE and not too_big and not turned and not animated:
                opened.load()  # it must decode to be worth sending
                return PreparedImage(data, SENDABLE[source_format], *opened.size)
            if too_big:  # decoded small (JPEG's draft mode), never whole
                opened.thumbnail((MAX_EDGE_PX, MAX_EDGE_PX), Image.Resampling.LANCZOS)
            else:
                opened.load()
            upright = ImageOps.exif_transpose(opened)  # of the small image: a cheap copy
    except (UnidentifiedImageError, OSError, ValueError, EOFError, SyntaxError):
        raise UnreadableImage("I couldn't open that image; please send it as a JPEG or "
                              "PNG photo.") from None
    except Image.DecompressionBombError:
        raise UnreadableImage(f"That image is too large for me. {PIXEL_LIMIT}") from None
    out = io.BytesIO()
    if _has_alpha(upright):
        upright.save(out, "PNG", optimize=True)
        media_type = "image/png"
    else:
        upright.convert("RGB").save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
        media_type = "image/jpeg"
    return PreparedImage(out.getvalue(), media_type, *upright.size)


def refuse_too_many_pixels(width: int, height: int) -> None:
    """``UnreadableImage`` for a picture declaring more than ``MAX_IMAGE_PIXELS``."""
    if width * height > MAX_IMAGE_PIXELS:
        raise UnreadableImage(f"That image is too large for me ({width:,} × {height:,} "
                              f"pixels). {PIXEL_LIMIT}")


def _has_alpha(image: PillowImage.Image) -> bool:
    return image.mode in {"RGBA", "LA", "PA"} or (image.mode == "P"
                                                  and "transparency" in image.info)
