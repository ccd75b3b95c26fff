"""The conventions of an existing file that an edit adopts: line ending and encoding.

Agents send text with ``\\n`` line endings; a person's file may use ``\\r\\n`` (Windows)
or a legacy 8-bit encoding. An edit writes its new text the way the file already is, so
a patched section never mixes ``\\r\\n`` and ``\\n`` and never changes the encoding:

* the line ending is the file's most common one (``\\r\\n``, ``\\n`` or ``\\r``; ``\\n``
  for a file without any, or on a tie);
* the encoding is UTF-8 when the file decodes as UTF-8 (a byte order mark, outside every
  section, stays where it is), else Latin-1, which reads any bytes back unchanged. Text
  that Latin-1 cannot hold is refused with ``validation_error`` rather than written in
  another encoding. UTF-16 files (a UTF-16 byte order mark) are refused: their bytes are
  not ASCII-compatible, so no byte range of them is a Markdown line.
"""

from __future__ import annotations

import re
from typing import Final

from detente.errors import ValidationError

__all__ = ["decoding_of", "encode_like", "encoding_of", "newline_of", "restyle"]

_TEXT_ENDINGS: Final = re.compile(r"\r\n|\n|\r")
_UTF16_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")


def newline_of(data: bytes) -> bytes:
    """The file's most common line ending (``b"\\n"`` when it has none or on a tie)."""
    # Counted as the regex ``\r\n|\n|\r`` would split them (a ``\r\n`` is one ending),
    # without a list of every ending: an append-only document is read whole per append.
    crlf = data.count(b"\r\n")
    counts = {b"\r\n": crlf, b"\n": data.count(b"\n") - crlf, b"\r": data.count(b"\r") - crlf}
    best = max(counts.values())
    if best == 0 or counts[b"\n"] == best:
        return b"\n"
    return b"\r\n" if counts[b"\r\n"] == best else b"\r"


def encoding_of(data: bytes, *, field: str = "content") -> str:
    """``"utf-8"`` or ``"latin-1"`` (see the module docstring).

    Raises:
        ValidationError: ``validation_error`` for a UTF-16 file.
    """
    if data.startswith(_UTF16_BOMS):
        raise ValidationError(
            "the file is UTF-16; detente edits UTF-8 (or 8-bit) Markdown files: convert it",
            field=field,
        )
    return decoding_of(data)


def decoding_of(data: bytes) -> str:
    """How to read ``data``'s text: ``"utf-8"`` if it decodes so, else ``"latin-1"``."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


def encode_like(text: str, data: bytes, *, field: str) -> bytes:
    """``text`` as bytes in ``data``'s line ending and encoding.

    Args:
        text: the new text (any line endings).
        data: the file it goes into (empty for a new file: UTF-8 with ``\\n``).
        field: the request field, named in errors.

    Raises:
        ValidationError: ``validation_error`` when the file's encoding cannot hold the
            text, or the file is UTF-16.
    """
    newline = newline_of(data).decode("ascii")
    encoding = encoding_of(data, field=field)
    unified = _TEXT_ENDINGS.sub(newline, text)
    try:
        return unified.encode(encoding)
    except UnicodeEncodeError as exc:
        raise ValidationError(
            f"{field}: {text[exc.start : exc.end]!r} cannot be written in the file's "
            f"encoding ({encoding})",
            field=field,
        ) from None


def restyle(new: bytes, data: bytes) -> bytes:
    """UTF-8 ``new`` bytes (``\\n`` endings) in ``data``'s line ending and encoding."""
    newline = newline_of(data)
    if encoding_of(data) == "utf-8" and newline == b"\n":
        return new
    return encode_like(new.decode("utf-8", "surrogateescape"), data, field="content")
