"""Reading text files that must be UTF-8, with the line of the first byte that is not.

Every input the suite reads as text (grid files, ``bench privatize`` input, dataset files) goes
through here, so that a file in another encoding is reported the same way everywhere: one line
naming the file, the line number and the offending byte.
"""

from __future__ import annotations

from pathlib import Path

from bench.errors import InputError


class NotUTF8Error(InputError, ValueError):
    """Bytes that are not UTF-8: :attr:`line` (1-based) and :attr:`byte`, the first bad one."""

    def __init__(self, line: int, byte: int) -> None:
        super().__init__(f"line {line}: not UTF-8 text (byte {byte:#04x})")
        self.line = line
        self.byte = byte


def decode_utf8(raw: bytes) -> str:
    """``raw`` decoded as UTF-8.

    Raises:
        NotUTF8Error: with the line number of the first invalid byte and the byte.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotUTF8Error(raw.count(b"\n", 0, e.start) + 1, raw[e.start]) from None


def first_non_utf8_line(file: Path) -> int:
    """The number of the first line of ``file`` that is not valid UTF-8 (0: every line is).

    Reads line by line, for files too large to hold in memory at once.
    """
    with file.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return lineno
    return 0
