"""Text a model wrote, made encodable: each lone surrogate becomes U+FFFD.

JSON may escape half of a UTF-16 pair (``"\\ud800"``), and Python decodes it to
a lone surrogate, which no UTF-8 encoder takes: msgspec, ``httpx`` sending the
next request and a file all raise. A model (or an endpoint posing as one)
that writes one must not end its agent or cost a transcript line, so its text
and tool arguments are cleaned where they come in, and the transcript writer
cleans a line that would not encode. (A valid pair is one code point in a
Python string, so every surrogate found is a lone one.)
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "valid_json", "valid_text"]

#: What a lone surrogate becomes.
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate replaced (itself when it has none)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def valid_json(value: Any) -> Any:
    """A JSON value (``dict``, ``list`` or ``tuple``, ``str``, numbers...) with its
    strings made valid, keys included; the same object when nothing needed it."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        items = [
            (valid_text(k) if isinstance(k, str) else k, valid_json(v)) for k, v in value.items()
        ]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        cleaned = [valid_json(v) for v in value]
        if all(v is v0 for v, v0 in zip(cleaned, value, strict=True)):
            return value
        return cleaned if isinstance(value, list) else tuple(cleaned)
    return value
