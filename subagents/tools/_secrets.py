"""Secrets: which names hold one, the environment a child process gets, and masking.

The one place that decides what a secret is. An environment variable holds a
secret (:func:`is_secret_variable`) when it is a known provider or cloud
credential (:data:`SECRET_ENV_VARS`) or when its name says so: a part
``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``PASSPHRASE``,
``CREDENTIAL(S)`` or ``APIKEY``, or ``API_KEY``, ``ACCESS_KEY``,
``PRIVATE_KEY`` or ``SECRET_KEY`` in it (``GITHUB_TOKEN``,
``AWS_SECRET_ACCESS_KEY``, ``DEPLOY_PASSWORD``, ``OPENAI_API_KEY``). A key of
logged data (:func:`is_secret_key`) is a secret by the same words, plus
``auth``, ``authorization`` and ``cookie`` (headers).

Child processes (``Bash``, command hooks) start from :func:`child_environment`:
the parent's environment without its secret variables, except those the
``env_passthrough`` setting names. Whatever a tool shows is then masked by a
:class:`SecretRedactor`: the values of the runtime's secret variables
(passed through or not: a passed-through value may be used, not shown) are
replaced by :data:`REDACTED` wherever they appear, so a program that prints
them, or reads the runtime's own ``/proc/<pid>/environ``, shows nothing. Only
values of at least :data:`MIN_SECRET_CHARS` characters are masked (``1`` or
``yes`` would mask ordinary text). Masking finds the exact value, not an
encoding of it (base64, reversed...): it keeps secrets out of transcripts by
accident, it does not stop a command written to smuggle them out.

:func:`mask_text` also masks what looks like a secret in free text (Anthropic
keys, ``Bearer`` tokens, ``token=...`` pairs); it is for log lines and error
messages, never for tool results, where it would mangle code.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Final

import attrs

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SECRET_ENV_VARS",
    "SecretRedactor",
    "child_environment",
    "is_secret_key",
    "is_secret_variable",
    "mask_text",
    "secret_values",
]

#: What a secret is replaced with.
REDACTED: Final = "[REDACTED]"
#: Values shorter than this are not masked by equality: they would mask ordinary text.
MIN_SECRET_CHARS: Final = 8
#: The shortest piece of a secret masked where output was cut (:meth:`SecretRedactor.redact`).
_MIN_PIECE_CHARS: Final = 4
#: Provider and cloud variables that hold a secret (most also match the name patterns).
SECRET_ENV_VARS: Final = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "MISTRAL_API_KEY",
    "COHERE_API_KEY",
    "GROQ_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
)
_SECRET_VARIABLES: Final = frozenset(SECRET_ENV_VARS)

# Words that make a name a secret, matched against its ``_``-separated parts.
_SECRET_WORDS: Final = frozenset(
    {
        "apikey",
        "credential",
        "credentials",
        "passphrase",
        "passwd",
        "password",
        "secret",
        "token",
    }
)
# Pairs of parts that make a name a secret wherever they stand in it.
_SECRET_PAIRS: Final = ("api_key", "access_key", "private_key", "secret_key")
# More words for keys of logged data (HTTP headers): not for variables, where
# ``SSH_AUTH_SOCK`` names a socket, not a secret.
_HEADER_WORDS: Final = frozenset({"auth", "authorization", "cookie"})
_NON_ALNUM: Final = re.compile(r"[^a-z0-9]+")

_ANTHROPIC_KEY: Final = re.compile(r"sk-ant-[A-Za-z0-9_\-]+")
_GENERIC_KEY: Final = re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}")
_BEARER: Final = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*")
_SECRET_PAIR: Final = re.compile(
    r"(?i)\b((?:x-api-key|api[-_]?key|authorization|password|passwd|secret|"
    r"(?:access|refresh|auth)[-_]?token|token)[\"']?\s*[:=]\s*[\"']?)"
    r"(?!bearer\s|\[REDACTED\])([^\s\"',;&}\]]+)"
)


def _parts(name: str) -> tuple[str, list[str]]:
    normal = _NON_ALNUM.sub("_", name.lower()).strip("_")
    return normal, normal.split("_")


def _named_secret(normal: str, parts: list[str]) -> bool:
    padded = f"_{normal}_"
    return any(f"_{pair}_" in padded for pair in _SECRET_PAIRS) or any(
        part in _SECRET_WORDS for part in parts
    )


@functools.lru_cache(maxsize=2048)
def is_secret_variable(name: str) -> bool:
    """Whether environment variable ``name`` holds a secret (see the module docstring).

    ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY`` and ``DB_PASSWORD`` do;
    ``PATH``, ``SSH_AUTH_SOCK`` and ``TOKENIZERS_PARALLELISM`` do not.
    """
    if name.upper() in _SECRET_VARIABLES:
        return True
    return _named_secret(*_parts(name))


@functools.lru_cache(maxsize=2048)
def is_secret_key(key: str) -> bool:
    """Whether a key's value is a secret (``api_key``, ``X-Api-Key``, ``access_token``...).

    ``input_tokens`` and ``max_tokens`` are counts, not secrets.
    """
    normal, parts = _parts(key)
    return _named_secret(normal, parts) or any(part in _HEADER_WORDS for part in parts)


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of ``env``'s secret variables long enough to mask, longest first."""
    found: set[str] = set()
    for name, value in env.items():
        if not is_secret_variable(name):
            continue
        for candidate in (value, value.strip()):
            if len(candidate) >= MIN_SECRET_CHARS:
                found.add(candidate)
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def child_environment(
    env: Mapping[str, str] | None = None, passthrough: Collection[str] = ()
) -> dict[str, str]:
    """``env`` (default ``os.environ``) without its secret variables, but those in ``passthrough``.

    Names in ``passthrough`` are exact (case-sensitive, as the environment is).
    """
    source = os.environ if env is None else env
    return {
        name: value
        for name, value in source.items()
        if name in passthrough or not is_secret_variable(name)
    }


def _to_values(values: Iterable[str]) -> tuple[str, ...]:
    kept = {v for v in values if len(v) >= MIN_SECRET_CHARS}
    return tuple(sorted(kept, key=lambda v: (-len(v), v)))


@attrs.frozen
class SecretRedactor:
    """Masks known secret values in text; built from one or more environments.

    ``values`` are the exact texts to mask, longest first (so a value that
    contains another is masked whole); values shorter than
    :data:`MIN_SECRET_CHARS` are dropped.
    """

    values: tuple[str, ...] = attrs.field(default=(), converter=_to_values)

    @classmethod
    def from_environ(cls, *envs: Mapping[str, str]) -> SecretRedactor:
        """The values of the secret variables of ``envs`` (default: ``os.environ``)."""
        sources = envs or (os.environ,)
        return cls(tuple(v for env in sources for v in secret_values(env)))

    def __bool__(self) -> bool:
        return bool(self.values)

    def redact(self, text: str, *, cut_before: bool = False, cut_after: bool = False) -> str:
        """``text`` with every known secret value replaced by :data:`REDACTED`.

        ``cut_before``/``cut_after`` say ``text`` is what was kept of a longer
        output cut at its start/end: a secret the cut went through shows only a
        piece there, which is masked too (from :data:`_MIN_PIECE_CHARS` characters).
        """
        for value in self.values:
            if value in text:
                text = text.replace(value, REDACTED)
        if cut_after:
            piece = self._piece(text, lambda v, n: text.endswith(v[:n]))
            if piece:
                text = text[:-piece] + REDACTED
        if cut_before:
            piece = self._piece(text, lambda v, n: text.startswith(v[-n:]))
            if piece:
                text = REDACTED + text[piece:]
        return text

    def _piece(self, text: str, shows: Callable[[str, int], bool]) -> int:
        """The length of the longest piece of a secret that ``shows`` at a cut, or 0."""
        best = 0
        for value in self.values:
            for size in range(min(len(value) - 1, len(text)), max(best, _MIN_PIECE_CHARS - 1), -1):
                if shows(value, size):
                    best = size
                    break
        return best


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with ``secrets`` (exact values) and anything that looks like a secret masked."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_CHARS and secret in text:
            text = text.replace(secret, REDACTED)
    # Each pattern runs only on text that holds what it cannot match without (an id or a
    # path, most of a log line, holds none): the scans are most of the cost of a line.
    if "sk-" in text:
        text = _ANTHROPIC_KEY.sub(REDACTED, text)
        text = _GENERIC_KEY.sub(REDACTED, text)
    if "bearer" in text.lower():  # no character outside ASCII matches its letters
        text = _BEARER.sub(lambda m: f"{m[1]} {REDACTED}", text)
    if ":" in text or "=" in text:
        text = _SECRET_PAIR.sub(lambda m: m[1] + REDACTED, text)
    return text
