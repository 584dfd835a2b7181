"""One rule for counts and one for seconds, whichever layer a value is given to.

The kernel's :class:`~subagents.actors.SupervisorConfig`, the runtime's settings
(:class:`~subagents.runtime.LimitsConfig`) and a run's
:class:`~subagents.runtime.Limits` each raise their own error (the settings
error names where the value was written), but they accept and refuse exactly
the same values, because all three ask :func:`subagents.actors.is_count` and
:func:`subagents.actors.is_seconds`.
"""

from __future__ import annotations

from collections.abc import Callable

import hypothesis.strategies as st
from hypothesis import given

from subagents import SubagentsError
from subagents.actors import SupervisorConfig, is_count, is_seconds
from subagents.runtime import Limits, LimitsConfig

#: Values a user or a settings file might give: whole numbers, huge ones, bools,
#: floats including inf and NaN, strings and nothing.
values = st.one_of(
    st.integers(min_value=-3, max_value=3),
    st.just(10**400),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.none(),
)


def accepted(make: Callable[[], object]) -> bool:
    """Whether building the value succeeds; a refusal must be a typed error, never a crash."""
    try:
        make()
    except SubagentsError:
        return False
    return True


@given(values)
def test_every_layer_accepts_the_same_counts(value: object) -> None:
    expected = is_count(value, 1)
    assert accepted(lambda: SupervisorConfig(max_threads=value)) is expected  # type: ignore[arg-type]
    assert accepted(lambda: LimitsConfig(max_threads=value)) is expected  # type: ignore[arg-type]
    assert accepted(lambda: Limits(max_turns=value)) is expected  # type: ignore[arg-type]


@given(values)
def test_every_layer_accepts_the_same_seconds(value: object) -> None:
    expected = is_seconds(value)
    assert accepted(lambda: SupervisorConfig(close_grace_period=value)) is expected  # type: ignore[arg-type]
    assert accepted(lambda: LimitsConfig(close_grace_period=value)) is expected  # type: ignore[arg-type]
    assert accepted(lambda: Limits(max_time_seconds=value)) is expected  # type: ignore[arg-type]


def test_the_rules() -> None:
    counts = [(1, 1), (0, 0), (10**400, 1)]
    not_counts = [(0, 1), (True, 0), (1.0, 1), ("1", 1), (None, 0)]
    assert all(is_count(value, minimum) for value, minimum in counts)
    assert not any(is_count(value, minimum) for value, minimum in not_counts)
    assert all(is_seconds(value) for value in (0, 0.5, 10**300))
    bad = (-0.1, float("inf"), float("nan"), 10**400, False, "1", None)
    assert not any(is_seconds(value) for value in bad)
