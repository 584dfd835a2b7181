"""The public surfaces of ``subagents.runtime`` and ``subagents.testing``, and the small values."""

from __future__ import annotations

import pickle
import types

import jsonschema.validators
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import subagents.runtime as runtime
import subagents.testing as testing
from subagents._exceptions import SubagentsError
from subagents.agents import OutputSpec
from subagents.runtime import (
    COMPLETE_TASK,
    AgentResult,
    AgentRunFailed,
    BadRequest,
    InvalidLimits,
    InvalidOutputSchema,
    Limits,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
    StreamError,
    TerminateReason,
    TurnCompleted,
    Usage,
    complete_task_tool,
    provider_error,
)
from subagents.runtime._complete_task import Completion
from tests.runtime.helpers import REPORT_SCHEMA, definition


@pytest.mark.parametrize("module", [runtime, testing])
def test_all_is_complete_and_resolves(module: types.ModuleType) -> None:
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", module.__name__).startswith(module.__name__)
    }
    exported = set(module.__all__)
    assert len(module.__all__) == len(exported)
    assert public <= exported
    for name in module.__all__:
        assert hasattr(module, name), name


def test_runtime_exports_every_public_name_it_imports() -> None:
    public = {
        name
        for name, value in vars(runtime).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(runtime.__all__)


def test_every_exception_derives_from_the_package_root() -> None:
    exceptions = [
        value
        for value in (getattr(runtime, name) for name in runtime.__all__)
        if isinstance(value, type) and issubclass(value, BaseException)
    ]
    assert len(exceptions) >= 15
    # Configuration errors are raised before any runtime exists (see _exceptions.py).
    configuration = {runtime.ConfigError, runtime.HookConfigError}
    for exc in exceptions:
        assert issubclass(exc, SubagentsError)
        if exc not in configuration:
            assert issubclass(exc, runtime.AgentRuntimeError)


@pytest.mark.parametrize(
    ("error_type", "status", "expected"),
    [
        ("overloaded_error", None, Overloaded),
        ("rate_limit_error", 429, RateLimited),
        ("api_error", 500, ServerError),
        ("invalid_request_error", 400, BadRequest),
        ("brand_new_error", None, StreamError),
        (None, 529, Overloaded),
        (None, 503, ServerError),
        (None, 404, BadRequest),
        (None, 401, runtime.AuthenticationFailed),
        (None, 504, runtime.ProviderTimeout),
    ],
)
def test_provider_errors_are_classified_by_type_then_status(
    error_type: str | None, status: int | None, expected: type[ProviderError]
) -> None:
    error = provider_error("boom", error_type=error_type, status_code=status, request_id="r1")
    assert type(error) is expected
    assert (error.status_code, error.error_type, error.request_id) == (status, error_type, "r1")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is expected
    assert (str(copy), copy.request_id) == ("boom", "r1")


def test_rate_limits_keep_their_retry_after_through_pickling() -> None:
    error = provider_error("slow down", status_code=429, retry_after=2.5)
    assert isinstance(error, RateLimited)
    copy = pickle.loads(pickle.dumps(error))
    assert isinstance(copy, RateLimited)
    assert copy.retry_after == 2.5


def test_run_failed_carries_the_result() -> None:
    result = AgentResult(terminate_reason=TerminateReason.MAX_TURNS, turns=3, tool_uses=2)
    error = AgentRunFailed(result)
    assert str(error) == "max_turns: the agent used all its turns before completing its task " + (
        "after 3 turns and 2 tool uses"
    )
    assert pickle.loads(pickle.dumps(error)).result == result


def test_results_encode_and_say_whether_they_succeeded() -> None:
    goal = AgentResult(
        terminate_reason=TerminateReason.GOAL,
        output={"b": 1, "a": [1]},
        usage=Usage(1, 2, 3, 4),
        grace="timeout",
    )
    assert goal.succeeded
    assert goal.status == "success"
    assert goal.report() == '{"a": [1], "b": 1}'
    assert goal.usage.total_tokens == 10
    decoded = msgspec.json.decode(msgspec.json.encode(goal), type=AgentResult)
    assert decoded == goal
    for reason in TerminateReason:
        result = AgentResult(terminate_reason=reason, text="t")
        assert result.succeeded is (reason is TerminateReason.GOAL)
        assert result.status == {"goal": "success", "aborted": "aborted"}.get(
            reason.value, "failure"
        )


def test_events_are_json_encodable() -> None:
    event = TurnCompleted(
        agent_id="a",
        parent_id=None,
        depth=0,
        nickname="Ada",
        turn=1,
        stop_reason="end_turn",
        tool_calls=0,
        usage=Usage(5, 6),
    )
    data = msgspec.json.decode(msgspec.json.encode(event))
    assert data["type"] == "turn_completed"
    assert data["usage"]["output_tokens"] == 6


def test_limits_come_from_the_definition_then_the_defaults() -> None:
    limits = Limits.for_definition(definition(max_turns=7, grace=0.0))
    assert limits == Limits(max_turns=7, max_time_seconds=300.0, grace_period_seconds=0.0)
    custom = Limits(max_turns=2, max_time_seconds=9.0, grace_period_seconds=1.0)
    assert Limits.for_definition(definition(), defaults=custom) == custom
    assert Limits.for_definition(definition(max_turns=7), max_turns=3).max_turns == 3
    with pytest.raises(InvalidLimits, match="max_turns must be a whole number"):
        Limits(max_turns=0)
    with pytest.raises(InvalidLimits, match="every run has a deadline"):
        Limits(max_time_seconds=float("inf"))


def test_complete_task_parameters_come_from_the_output_schema() -> None:
    schema = {
        "$defs": {"item": {"type": "string"}},
        "type": "array",
        "items": {"$ref": "#/$defs/item"},
    }
    tool = complete_task_tool(OutputSpec("findings", description="What you found", schema=schema))
    assert tool.spec["name"] == COMPLETE_TASK
    parameters = tool.spec["input_schema"]
    assert parameters["required"] == ["findings"]
    assert parameters["additionalProperties"] is False
    assert parameters["$defs"] == {"item": {"type": "string"}}
    assert parameters["properties"]["findings"]["description"] == "What you found"
    assert tool.check({"findings": ["a", "b"]}).output == ["a", "b"]  # type: ignore[union-attr]
    problem = tool.check({"findings": ["a", 3]})
    assert isinstance(problem, str)
    assert "at $.findings[1]: 3 is not of type 'string'" in problem
    assert complete_task_tool(OutputSpec("findings", "What you found", schema)) is tool


def test_complete_task_without_an_output_schema_takes_a_result_text() -> None:
    tool = complete_task_tool(None)
    assert tool.spec["input_schema"]["required"] == ["result"]
    assert tool.check({"result": "all done"}).text == "all done"  # type: ignore[union-attr]
    assert "'result' is a required property" in str(tool.check({}))


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["result", "Result", "other", ""]), _JSON_VALUES))
def test_complete_task_without_a_schema_accepts_exactly_what_its_schema_accepts(
    arguments: dict[str, object],
) -> None:
    """The check answers a plain ``result`` string without the validator (every agent's
    last call): it must accept what the schema accepts, and nothing else."""
    tool = complete_task_tool(None)
    valid = jsonschema.validators.validator_for(tool.schema)(tool.schema).is_valid(arguments)
    checked = tool.check(arguments)
    assert isinstance(checked, Completion) is valid
    if isinstance(checked, Completion):
        assert checked.text == arguments["result"]
        assert checked.output is None


def test_an_invalid_output_schema_is_refused_when_the_tool_is_built() -> None:
    with pytest.raises(InvalidOutputSchema, match="not a valid JSON Schema"):
        complete_task_tool(OutputSpec("report", schema={"type": "no-such-type"}))
    assert complete_task_tool(OutputSpec("report", schema=REPORT_SCHEMA)).output is not None
