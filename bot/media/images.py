"""Make a photo ready for a vision model: opened with Pillow, turned upright, downscaled.

Both providers recommend a long edge of at most 1568 px (Anthropic says larger images are
scaled down on their side anyway, at the cost of latency; OpenAI's high detail tiles at about
that size), and both take JPEG, PNG, WebP and GIF. So an image is kept as it is when it is
already one of those and small enough, else re-encoded: PNG when it has transparency, JPEG
otherwise. An animated GIF is sent as its first frame. Anything Pillow cannot open is an
``UnreadableImage`` with one sentence to show.

Pillow is imported when the first photo comes: a bot that only ever gets text never loads it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image as PillowImage

MAX_EDGE_PX = 1568
SENDABLE = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
JPEG_QUALITY = 85
ORIENTATION_TAG = 0x0112  # EXIF: a phone's photo is often stored sideways with this set
# A decompression bomb (a tiny file that opens as gigapixels) is refused, not decoded.
MAX_IMAGE_PIXELS = 60_000_000


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

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    try:
        with Image.open(io.BytesIO(data)) as opened:
            source_format = opened.format or ""
            animated = bool(getattr(opened, "is_animated", False))
            turned = opened.getexif().get(ORIENTATION_TAG, 1) != 1
            upright = ImageOps.exif_transpose(opened)
            upright.load()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        raise UnreadableImage("I couldn't open that image; please send it as a JPEG or "
                              "PNG photo.") from None
    too_big = max(upright.size) > MAX_EDGE_PX
    if source_format in SENDABLE and not too_big and not turned and not animated:
        return PreparedImage(data, SENDABLE[source_format], *upright.size)
    if too_big:
        upright.thumbnail((MAX_EDGE_PX, MAX_EDGE_PX), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if _has_alpha(upright):
        upright.save(out, "PNG", optimize=True)
        media_type = "image/png"
    else:
        upright.convert("RGB").save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
        media_type = "image/jpeg"
    return PreparedImage(out.getvalue(), media_type, *upright.size)


def _has_alpha(image: PillowImage.Image) -> bool:
    return image.mode in {"RGBA", "LA", "PA"} or (image.mode == "P"
                                                  and "transparency" in image.info)
