"""``subagents.demo``: its public names, and their old home in ``subagents.runtime``."""

from __future__ import annotations

import types

import pytest

import subagents.demo as demo
import subagents.runtime as runtime


def test_demo_all_is_complete_and_resolves() -> None:
    public = {
        name
        for name, value in vars(demo).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(demo.__all__)
    assert public == {
        "DEFAULT_SURVEY_LATENCY",
        "LEAD_TOOLS",
        "MATE_TOOLS",
        "run_demo",
        "survey_policies",
        "team_policies",
    }


@pytest.mark.parametrize("name", ["survey_policies", "DEFAULT_SURVEY_LATENCY"])
def test_the_old_survey_names_still_work_and_warn(name: str) -> None:
    """``subagents.runtime.survey_policies`` moved to ``subagents.demo``: it still works, warned."""
    assert name not in runtime.__all__
    with pytest.warns(
        DeprecationWarning, match=rf"^subagents\.runtime\.{name} moved to subagents\.demo\.{name}"
    ):
        old = getattr(runtime, name)
    assert old is getattr(demo, name)
    with pytest.warns(DeprecationWarning, match="import it from subagents.demo"):
        from subagents.runtime import survey_policies  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = runtime.nothing_here  # type: ignore[attr-defined]
