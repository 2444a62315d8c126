"""Errors as data: every failure the user can cause is an HloError with a source location.

Rendered the way XLA and compilers do:

    model.hlo:12:31: error: expected ',' or ')', found '='
      %add.1 = f32[4] add(%p0 = %p1)
                                  ^
"""
from __future__ import annotations

import bisect
import re
from typing import Optional

from .records import record


@record
class SourceText:
    """The text being parsed, with a line index for offset -> line/column conversions."""
    text: str
    filename: str = "<string>"
    _line_starts: Optional[list[int]] = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        starts = self.line_starts
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def line_text(self, line: int) -> str:
        starts = self.line_starts
        if line < 1 or line > len(starts):
            return ""
        end = self.text.find("\n", starts[line - 1])
        return self.text[starts[line - 1]:] if end < 0 else self.text[starts[line - 1]:end]


class HloError(Exception):
    """A located error: FILE:LINE:COL: error: MESSAGE, the source line and a caret."""

    def __init__(self, message: str, *, filename: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, source_line: Optional[str] = None,
                 notes: Optional[list[str]] = None, code: str = "error"):
        super().__init__(message)
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        self.notes = notes or []
        self.code = code

    @classmethod
    def at(cls, source: SourceText, offset: int, message: str, **kw) -> "HloError":
        line, col = source.line_col(offset)
        return cls(message, filename=source.filename, line=line, column=col,
                   source_line=source.line_text(line), **kw)

    @property
    def location(self) -> str:
        return location_text(self.filename, self.line, self.column)

    def render(self) -> str:
        out = [f"{self.location}: error: {self.message}"]
        out += caret_excerpt(self.source_line, self.column)
        for note in self.notes:
            out.append(f"note: {note}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()

    def to_dict(self) -> dict:
        return {"file": self.filename, "line": self.line, "column": self.column,
                "severity": "error", "code": self.code, "message": self.message}


def location_text(filename, line, column) -> str:
    """`FILE:LINE:COL` (as much of it as is known)."""
    parts = [filename or "<string>"]
    if line is not None:
        parts.append(str(line))
        if column is not None:
            parts.append(str(column))
    return ":".join(parts)


def format_bytes(n: float, unit: str = "B") -> str:
    """A byte count for people: exact below 1 KiB (`512 B`, `12.5 B` for an average), else one
    decimal in binary units (`320.0 MiB`, up to PiB).  `unit` names the bytes themselves (`B`, or
    `bytes` in error messages)."""
    if abs(n) < 1024:
        return f"{int(n)} {unit}" if float(n).is_integer() else f"{float(n)} {unit}"
    n = float(n)
    for u in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        n /= 1024.0
        if abs(n) < 1024 or u == "PiB":
            break
    return f"{n:.1f} {u}"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def caret_excerpt(source_line, column) -> list[str]:
    """The source line and a caret under `column` (1-based), indented; long lines (single-line dumps,
    big constants) are cut around the caret.  Empty when either is unknown."""
    if source_line is None or column is None:
        return []
    # Control characters (a NUL in a binary file, an escape sequence) would reach the terminal raw:
    # show each as U+FFFD, one column wide like the character it stands for, so the caret stays put.
    src = _CONTROL.sub("\ufffd", source_line.rstrip("\r").replace("\t", " "))
    col = column - 1
    if len(src) > 160:
        start = max(0, col - 80)
        prefix = "..." if start > 0 else ""
        src = prefix + src[start:start + 160] + ("..." if start + 160 < len(src) else "")
        col = col - start + len(prefix)
    return ["  " + src, "  " + " " * col + "^"]


MAX_MODULE_BYTES = 2 << 30  # a module text larger than this is refused (an endless stream, /dev/zero)
_CHUNK = 16 << 20


class TooLarge(Exception):
    """What read_limited raises: the stream holds more than the limit (or a NUL, with text=True)."""


def read_limited(f, limit: int, text: bool = False) -> bytes:
    """All of binary stream `f`, read in chunks, refused (TooLarge) as soon as it passes `limit`
    bytes: an endless stream (/dev/zero, a FIFO) never fills the memory.  text=True also stops at
    a run of NUL bytes, which no text holds (/dev/zero ends at once; a stray NUL is left to the
    parser, which points at it)."""
    data = bytearray()
    while True:
        chunk = f.read(min(_CHUNK, limit + 1 - len(data)))
        if not chunk:
            return data
        nul = chunk.find(_NULS) if text else -1
        if nul >= 0:
            raise TooLarge(f"not a text file (NUL bytes from byte {len(data) + nul})")
        data += chunk
        if len(data) > limit:
            raise TooLarge(f"larger than {limit} bytes: refused (is it an endless stream?)")


_NULS = b"\0" * 1024


def read_source(path: str) -> tuple[str, str]:
    """(text, display name) of an HLO file; '-' is standard input.  Raises HloError, never OSError.
    Reads at most MAX_MODULE_BYTES (more, or a run of NUL bytes, is an error: /dev/zero ends at once)."""
    import os
    import sys
    try:
        if path == "-":
            name = "<stdin>"
            data = read_limited(sys.stdin.buffer, MAX_MODULE_BYTES, text=True)
        else:
            name = path
            if os.path.isdir(path):
                raise HloError("is a directory (give an HLO text file)", filename=path)
            try:
                with open(path, "rb") as f:
                    data = read_limited(f, MAX_MODULE_BYTES, text=True)
            except FileNotFoundError:
                raise HloError("no such file", filename=path) from None
            except OSError as e:
                raise HloError(f"cannot read: {e.strerror}", filename=path) from None
    except TooLarge as e:
        raise HloError(str(e), filename=name) from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        raise HloError(f"not a text file (invalid UTF-8 at byte {e.start})", filename=name) from None
