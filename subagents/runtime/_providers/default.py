"""Choosing the provider when the caller names none."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from subagents.runtime._config.defaults import API_KEY_ENV
from subagents.runtime._providers.anthropic import AnthropicProvider
from subagents.runtime._providers.scripted import ScriptedProvider

__all__ = ["default_provider"]


def default_provider(
    env: Mapping[str, str] | None = None, **scripted: Any
) -> AnthropicProvider | ScriptedProvider:
    """:class:`AnthropicProvider` when ``ANTHROPIC_API_KEY`` is set in ``env``, else
    :class:`ScriptedProvider` (offline, with ``scripted`` options).

    ``env`` defaults to ``os.environ``. Either result is used with ``async with``.
    """
    env = os.environ if env is None else env
    if env.get(API_KEY_ENV, "").strip():
        return AnthropicProvider(env=env)
    return ScriptedProvider(**scripted)
