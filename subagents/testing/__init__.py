r"""The public test kit: a loopback Anthropic server and helpers for scripted policies.

**The loopback server** speaks the Anthropic Messages API wire format on
127.0.0.1 (an ephemeral port), so tests can run the real ``anthropic`` SDK, and
:class:`~subagents.runtime.AnthropicProvider`, without any network. It serves a
script: one reply per request, in order, from a list (or a callable)::

    from subagents import testing

    content = [testing.text("Hello"), testing.tool_use("toolu_1", "Read", {"file_path": "a"})]
    script = [
        testing.ErrorReply(529, "overloaded_error", "Overloaded", retry_after=0.01),
        testing.SSEReply(testing.message_events(content)),
    ]
    async with testing.open_loopback_anthropic(script) as server:
        async with AnthropicProvider(api_key="test", base_url=server.base_url) as provider:
            ...
        assert server.requests[1].json()["model"] == "claude-..."

Replies: :class:`JSONReply` (a whole JSON body), :class:`SSEReply` (an event
stream with ``event:`` lines, sent with chunked encoding; it may hold
:class:`Pause`, :class:`Stall` and :class:`Disconnect` items to misbehave
mid-stream), :class:`ErrorReply` (an error status with an Anthropic error body,
``request-id`` and optional ``retry-after``), :class:`Stall` (never answer) and
:class:`Disconnect` (close without answering). Every response carries a
``request-id`` header. The server is bounded: it serves at most
``max_requests`` requests, drops connections idle for ``idle_timeout``
seconds, stalls for at most a stall's own ``seconds``, and everything it runs
ends when its ``async with`` block does. Builders (:func:`message_events`,
:func:`message_body`, :func:`text`, :func:`tool_use`, :func:`thinking`) make
the wire objects.

**Scripted policies**: :func:`say`, :func:`call`, :func:`finish`, :func:`fail`,
:func:`hang` and :func:`malformed` build :class:`~subagents.runtime.Reply`
values; :func:`tool_loop` is a policy that calls one tool for a number of
turns and then answers; :class:`RecordingPolicy` keeps what each request
showed the model. :class:`EchoTool` is a read-only tool that answers at once
(the benchmarks' ``Echo``), :data:`ECHO_WORKER` the agent type that calls it nine
times (:func:`echo_worker_project` writes it, :func:`echo_worker_provider` plays it).

**Property tests of a runtime** (the kit our own stateful tests use; the
strategies need Hypothesis, imported only when a strategy is called):

- :class:`DirectivePolicy` plays the :class:`ScriptedBehavior` chosen by
  the newest :func:`directive` in the conversation: ``finish``, ``fail`` (a
  provider error), ``hang``, ``tool`` (calls a tool, ``LS`` for the default
  instance :data:`directive_policy`, then answers) and
  ``malformed`` (a tool call whose arguments are not JSON, then answers), so a
  follow-up input can change what an agent's next run does;
- :func:`operations` draws sequences of :class:`Spawn` (foreground or
  background, top-level or under an agent), :class:`SendInput` (with or
  without interrupt), :class:`Wait`, :class:`Close`, :class:`Resume` and a
  final :class:`Cancel`; :func:`apply_operation` performs one on a runtime;
- :func:`behaviors`, :func:`agent_scripts` (turn-by-turn scripts: tool calls,
  then an answer, a ``complete_task`` call or a fault) and :func:`faults`
  (provider errors of every kind, hangs, malformed tool calls);
- :class:`InvariantChecker` listens to the bus (from before the runtime opens,
  each event checked as it is published) and records every broken promise:
  slots out of bounds, statuses off the transition table (more than one final
  status per run), events out of order or lost, a run whose result was not on
  disk, with its status, when its final status was published, unpaired
  start/stop hooks, and anything left running after exit. A subscription's
  reader would read the transcripts late, and take a result written since for
  an older one::

    bus = Bus()
    checker = InvariantChecker(max_threads=4, state_dir=state)
    with checker.listen(bus):
        async with open_runtime(config, bus=bus, provider=provider) as rt:
            agents: list[str] = []
            for op in ops:  # drawn from operations()
                await apply_operation(rt, op, agents, agent_type="Explore")
        checker.check_after_exit(rt.supervisor.statistics())
    checker.assert_ok()

**Property tests of a task board**: :class:`BoardMachine` is a Hypothesis
state machine over a real board (create, claim, claim races, complete,
release, block, crash and reopen) whose invariants hold after every step: no
task has two owners, no blocked task is claimed, a reopened board equals the
board before the crash. Run ``BoardMachine.TestCase``, or subclass it (add
rules, override :meth:`BoardMachine.refuses`); :class:`BoardHost` keeps a board
open in a Trio thread for synchronous tests. :class:`TeamMachine` extends it
with a real team (peer messages from one sender or several at once, tasks on
the team's board, idle, close a teammate, close the lead, crash and resume):
every message is delivered once or reported undeliverable, idle teammates
use no slot, closing the lead leaves no teammate or board writer running, and
a resumed team's board equals the board before the crash. These are imported on first use,
since they need Hypothesis.
"""

from __future__ import annotations

import typing
import warnings

from subagents.testing._echo import (
    ECHO_WORKER,
    ECHO_WORKER_TURNS,
    EchoArgs,
    EchoTool,
    echo_worker_project,
    echo_worker_provider,
)
from subagents.testing._invariants import InvariantChecker
from subagents.testing._loopback import LoopbackAnthropic, open_loopback_anthropic
from subagents.testing._ops import (
    Cancel,
    Close,
    DirectivePolicy,
    Operation,
    Resume,
    ScriptedBehavior,
    SendInput,
    Spawn,
    Wait,
    agent_scripts,
    apply_operation,
    behaviors,
    directive,
    directive_policy,
    faults,
    operations,
)
from subagents.testing._policies import (
    RecordingPolicy,
    call,
    fail,
    finish,
    hang,
    malformed,
    say,
    tool_loop,
)
from subagents.testing._wire import (
    DEFAULT_TEST_MODEL,
    Disconnect,
    ErrorReply,
    JSONReply,
    LoopbackReply,
    Pause,
    RecordedRequest,
    SSEEvent,
    SSEReply,
    Stall,
    error_body,
    message_body,
    message_events,
    server_tool_use,
    text,
    thinking,
    tool_use,
    web_search_tool_result,
)

__all__ = [
    # property tests of a task board (need Hypothesis; loaded on first use)
    "BoardHost",
    "BoardMachine",
    "ModelTask",
    "Crash",
    "Sent",
    "TeamRunner",
    "TeamMachine",
    # property tests of a runtime
    "ScriptedBehavior",
    "Cancel",
    "Close",
    "DirectivePolicy",
    "InvariantChecker",
    "Operation",
    "Resume",
    "SendInput",
    "Spawn",
    "Wait",
    "agent_scripts",
    "apply_operation",
    "behaviors",
    "directive",
    "directive_policy",
    "faults",
    "operations",
    # the loopback server and scripted policies
    "ECHO_WORKER",
    "ECHO_WORKER_TURNS",
    "EchoArgs",
    "EchoTool",
    "echo_worker_provider",
    "echo_worker_project",
    "DEFAULT_TEST_MODEL",
    "Disconnect",
    "ErrorReply",
    "JSONReply",
    "LoopbackAnthropic",
    "LoopbackReply",
    "Pause",
    "RecordedRequest",
    "RecordingPolicy",
    "SSEEvent",
    "SSEReply",
    "Stall",
    "call",
    "error_body",
    "fail",
    "finish",
    "hang",
    "malformed",
    "message_body",
    "message_events",
    "open_loopback_anthropic",
    "say",
    "text",
    "thinking",
    "tool_loop",
    "server_tool_use",
    "tool_use",
    "web_search_tool_result",
]


#: The scripted agent behaviors were ``Behavior`` (an actor's behavior is
#: :data:`subagents.actors.Behavior`): old name -> new name.
_RENAMED: typing.Final = {"Behavior": "ScriptedBehavior"}


#: Names whose module imports Hypothesis, a test-only dependency: loaded on first use.
_NEEDS_HYPOTHESIS: typing.Final = frozenset({"BoardHost", "BoardMachine", "ModelTask"})
#: The team's machine, which also needs Hypothesis: loaded on first use.
_TEAM_MACHINE: typing.Final = frozenset({"Crash", "Sent", "TeamRunner", "TeamMachine"})


def __getattr__(name: str) -> typing.Any:
    if name in _NEEDS_HYPOTHESIS:
        from subagents.testing import _board_machine

        value = getattr(_board_machine, name)
        globals()[name] = value
        return value
    if name in _TEAM_MACHINE:
        from subagents.testing import _team_machine

        value = getattr(_team_machine, name)
        globals()[name] = value
        return value
    # Old names, still served with a DeprecationWarning that gives the new one.
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(
            f"subagents.testing.{name} is deprecated: it is subagents.testing.{new} now",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module 'subagents.testing' has no attribute {name!r}")
