"""Small real files for the attachment tests: PDFs with text, photos, a silent recording.

``pdf_with_text`` writes a PDF by hand (one Helvetica text line per page, a correct xref
table): pypdf can read PDFs and encrypt them but not lay out text, and no PDF writer is a
dependency. The rest come from Pillow and the standard library.
"""

from __future__ import annotations

import io
import struct
import zlib

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


def pdf_sharing_one_stream(pages: int = 30, stream_bytes: int = 1 << 20) -> bytes:
    """A few KB of PDF whose pages all draw one compressed 1 MB content stream: every page
    costs pypdf seconds and gives ~30,000 characters."""
    operator = b"BT /F1 12 Tf 72 720 Td (a) Tj ET\n"
    stream = zlib.compress(operator * (stream_bytes // len(operator)), 9)
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    font, content = 3 + pages, 4 + pages
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode()]
    objects += [f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
                f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()] * pages
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode()
                   + stream + b"\nendstream")
    return _pdf_of(objects)


def _pdf_of(objects: list[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    out.write(b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets))
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
              .encode())
    return out.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    """A real RGBA PNG of ``width`` × ``height`` transparent pixels, compressed row by row (a
    10,950² one is a few hundred KB and decodes to 480 MB)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body)))

    packer = zlib.compressobj(9)
    row = b"\0" * (1 + 4 * width)  # filter byte, then the pixels
    data = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data)
            + chunk(b"IEND", b""))
