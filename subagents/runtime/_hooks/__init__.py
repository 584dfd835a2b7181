"""Hooks: user code run at seven points of an agent's life, never able to hang the runtime.

:mod:`.runner` is the :class:`~subagents.runtime.HookRunner` that fires them;
:mod:`.commands` the command hooks' wire format, settings shape and process
runner; :mod:`.values` the hook values; :mod:`.run` the ``SubagentStart`` and
``SubagentStop`` hooks around one run; :mod:`.tools` the ``PreToolUse`` and
``PostToolUse`` hooks wrapped around an agent's tools; :mod:`.tasks` the
``TaskCreated`` and ``TaskCompleted`` checkpoints of a team's task board.
"""
