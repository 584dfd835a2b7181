"""Every error ``subagents.tools`` raises.

A tool never raises for a mistake the model made: the registry turns a
:class:`ToolError` raised inside a tool into an error result whose text is the
exception's message, so these messages are written for the model to act on.
Registration errors are for the embedder and say what to fix::

    SubagentsError
    └── ToolError                   a tool could not do what was asked
        ├── ToolRegistrationError   a tool cannot be registered (bad name, duplicate...)
        ├── ToolArgumentsError      the model's arguments failed validation
        └── WorkspaceError          a path was refused by workspace confinement
            ├── WorkspaceEscapeError   the path leads outside the workspace root
            └── UnsupportedFileError   the path names something other than what the tool handles
"""

from __future__ import annotations

from subagents._exceptions import SubagentsError

__all__ = [
    "ToolArgumentsError",
    "ToolError",
    "ToolRegistrationError",
    "UnsupportedFileError",
    "WorkspaceError",
    "WorkspaceEscapeError",
]


class ToolError(SubagentsError):
    """A tool could not do what was asked; the message goes back to the model."""


class ToolRegistrationError(ToolError):
    """A tool cannot be registered: its name, description or arguments type is invalid."""


class ToolArgumentsError(ToolError):
    """The arguments a model sent do not match the tool's input schema."""


class WorkspaceError(ToolError):
    """A path was refused by workspace confinement."""


class WorkspaceEscapeError(WorkspaceError):
    """The path resolves outside the workspace root (``..``, absolute path or symlink)."""


class UnsupportedFileError(WorkspaceError):
    """The path exists but is not the kind of file the tool handles (FIFO, device, directory...)."""
