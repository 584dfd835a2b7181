"""Small text helpers shared by the file tools."""

from __future__ import annotations

import os

from subagents.tools._config import BINARY_SNIFF_BYTES

__all__ = ["clip_line", "is_binary", "read_at_most"]


def is_binary(head: bytes) -> bool:
    """Whether a file whose first bytes are ``head`` should be treated as binary (a NUL byte)."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def clip_line(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying it was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit} more characters]"


def read_at_most(fd: int, limit: int) -> bytes:
    """Read up to ``limit`` bytes from ``fd`` (fewer only at end of file)."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
