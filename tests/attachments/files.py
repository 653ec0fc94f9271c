"""Small real files for the attachment tests: PDFs with text, photos, a silent recording.

``pdf_with_text`` writes a PDF by hand (one Helvetica text line per page, a correct xref
table): pypdf can read PDFs and encrypt them but not lay out text, and no PDF writer is a
dependency. The rest come from Pillow and the standard library.
"""

from __future__ import annotations

import io

from PIL import Image
from pypdf import PdfReader, PdfWriter

from bot.media.transcription import silence_wav


def pdf_with_text(pages: list[str]) -> bytes:
    """A valid PDF whose pages show these lines of text."""
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    font = 3 + 2 * count
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{kids}] /Count {count} >>"]
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET"
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       f"/Contents {4 + 2 * i} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>")
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
              .encode())
    return out.getvalue()


def encrypted(pdf: bytes, password: str = "secret") -> bytes:
    """The same PDF, locked with a user password (pypdf's own RC4: AES would need the
    ``cryptography`` package, which is not a dependency)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def photo(width: int = 800, height: int = 600, fmt: str = "JPEG",
          mode: str = "RGB") -> bytes:
    """A photo of one colour, in a format Pillow writes."""
    color = (200, 80, 40, 128) if mode == "RGBA" else (200, 80, 40)
    out = io.BytesIO()
    Image.new(mode, (width, height), color).save(out, fmt)
    return out.getvalue()


def scanned_pdf() -> bytes:
    """A PDF with an image on its page and no text: what a scanner makes."""
    out = io.BytesIO()
    Image.new("RGB", (200, 300), (255, 255, 255)).save(out, "PDF")
    return out.getvalue()


def voice_note() -> bytes:
    """Some audio bytes (the fake transcription server does not decode them)."""
    return silence_wav(0.1)
