"""A file's bytes as text: UTF-8, or the encoding a Python file's coding declaration names."""

from __future__ import annotations

from precisionlint.core.model import Format
from precisionlint.sources import SourceError


def wide_encoding(data: bytes) -> str | None:
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    return None


def decode_source(data: bytes, display: str, fmt: Format | None = None) -> str:
    """The text of a file: UTF-8 (one BOM stripped), or for Python (`fmt`, else the name's suffix) the
    encoding its PEP 263 coding declaration names, as Python itself reads it."""
    wide = wide_encoding(data)
    if wide is not None:
        raise SourceError(f"encoded as {wide.upper()} (byte-order mark): precisionlint reads UTF-8 files only", 1, 1)
    python = fmt == "python" or (fmt is None and display.endswith((".py", ".pyi")))
    if python and not data.startswith(b"\xef\xbb\xbf"):
        declared = python_encoding(data)
        if declared is not None:
            return _decode_declared(data, declared)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise SourceError(f"not valid UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded", line, column) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SourceError("binary file: contains NUL bytes", line, 1)
    return text


def python_encoding(data: bytes) -> str | None:
    """The codec a Python file's coding declaration (PEP 263, on line 1 or 2) names, or None for UTF-8 (the
    default, and what a declaration of UTF-8 says). Raises SourceError for an unknown encoding."""
    head = b"\n".join(data[:1024].split(b"\n", 2)[:2])
    if b"coding" not in head:
        return None
    return cookie_encoding(head.decode("latin-1"))


def cookie_encoding(head: str) -> str | None:
    """As python_encoding, on the text of the first lines."""
    import codecs
    import re

    for number, line in enumerate(head.split("\n")[:2], start=1):
        found = re.match(r"[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", line, re.ASCII)
        if found:
            try:
                codec = codecs.lookup(found.group(1)).name
            except LookupError:
                raise SourceError(f"unknown encoding {found.group(1)!r} in the coding declaration", number,
                                  found.start(1) + 1) from None
            return None if codec.startswith("utf-8") else codec
        if not re.match(r"[ \t\f]*(?:[#\r]|$)", line):
            break  # a declaration on line 2 counts only below a comment or blank line
    return None


def _decode_declared(data: bytes, encoding: str) -> str:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise SourceError(f"not valid {encoding} (the file's coding declaration): byte 0x{data[exc.start]:02x} "
                          "cannot be decoded", line, column) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SourceError("binary file: contains NUL bytes", line, 1)
    return text
