"""How a peer message reaches its recipient's model: data inside a delimited block.

A teammate's words are data for the recipient, never instructions from the
user, as a child's result is (:func:`subagents.tools.format_agent_result`). The
block names the sender by name and agent id; any closing tag inside the text
has its ``<`` escaped, so a message cannot end the block early and pass itself
off as the runtime's words. Claude Code frames peer messages the same way, in
``<teammate-message teammate_id=...>`` envelopes.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["PEER_MESSAGE_TAG", "format_peer_message"]

#: The tag of the block a peer message is framed in.
PEER_MESSAGE_TAG: Final = "teammate_message"
# Anything a parser (or a model) could take for the closing tag.
_CLOSING_TAG = re.compile(r"<(?=\s*/\s*" + PEER_MESSAGE_TAG + r")", re.IGNORECASE)


def _attribute(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def format_peer_message(team_name: str, from_name: str, from_id: str, text: str) -> str:
    """``text`` from teammate ``from_name`` as a delimited block the recipient reads as data."""
    body = _CLOSING_TAG.sub("&lt;", text)
    return (
        f"Message from your teammate {from_name} (team {team_name}). Reply with SendMessage "
        f"to: {from_name!r} if it needs an answer.\n"
        f'<{PEER_MESSAGE_TAG} team="{_attribute(team_name)}" from="{_attribute(from_name)}" '
        f'agent_id="{_attribute(from_id)}">\n'
        f"{body}\n"
        f"</{PEER_MESSAGE_TAG}>"
    )
