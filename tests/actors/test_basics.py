"""Configuration, statuses, nicknames and the public surface of the kernel."""

from __future__ import annotations

import itertools
import re

import msgspec
import pytest

import subagents.actors as actors
from subagents import SubagentsError
from subagents.actors import (
    NOT_FOUND,
    PENDING_INIT,
    RUNNING,
    SHUTDOWN,
    Completed,
    Errored,
    IllegalTransition,
    InvalidConfiguration,
    NicknamePool,
    Status,
    StatusChanged,
    SupervisorConfig,
    check_transition,
    is_final,
    is_live,
    kind_of,
    ordinal,
)


def test_public_surface_is_complete() -> None:
    public = {name for name in dir(actors) if not name.startswith("_")}
    assert set(actors.__all__) == public
    for name in actors.__all__:
        assert getattr(actors, name) is not None


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("max_threads", 0, "max_threads must be a whole number of at least 1 (got 0)"),
        ("max_threads", 2.5, "max_threads must be a whole number"),
        ("max_threads", True, "max_threads must be a whole number"),
        ("max_depth", -1, "max_depth must be a whole number of at least 0 (got -1)"),
        ("mailbox_size", 0, "mailbox_size must be a whole number of at least 1"),
        ("close_grace_period", -1, "close_grace_period must be a finite number of seconds"),
        ("close_grace_period", float("inf"), "close_grace_period must be a finite"),
        ("cancel_timeout", float("nan"), "cancel_timeout must be a finite"),
        ("nicknames", (), "nicknames must be a non-empty list"),
        ("nicknames", ("Ada", "Ada"), "distinct"),
        ("nicknames", "Ada", "nicknames must be"),
        ("retain_closed", -1, "retain_closed must be a whole number of at least 0"),
        ("bus_capacity", 0, "bus_capacity must be a whole number of at least 1"),
    ],
)
def test_invalid_configuration_is_rejected_with_a_clear_message(
    field: str, value: object, words: str
) -> None:
    with pytest.raises(InvalidConfiguration, match=re.escape(words)) as info:
        SupervisorConfig(**{field: value})  # type: ignore[arg-type]
    assert isinstance(info.value, SubagentsError)
    assert isinstance(info.value, ValueError)


def test_defaults_follow_the_design() -> None:
    config = SupervisorConfig()
    assert (config.max_threads, config.max_depth, config.mailbox_size) == (8, 1, 64)
    assert SupervisorConfig(max_depth=0, nicknames=["A"]).nicknames == ("A",)


ALL: list[Status] = [PENDING_INIT, RUNNING, Completed("r"), Errored("e"), SHUTDOWN, NOT_FOUND]
LEGAL = {
    ("pending_init", "running"),
    ("pending_init", "errored"),
    ("pending_init", "shutdown"),
    ("running", "completed"),
    ("running", "errored"),
    ("running", "shutdown"),
    ("completed", "running"),
    ("errored", "running"),
    ("completed", "shutdown"),  # closed once finished (Codex's close_agent)
    ("errored", "shutdown"),
}


@pytest.mark.parametrize(("old", "new"), list(itertools.product(ALL, ALL)))
def test_the_transition_table(old: Status, new: Status) -> None:
    if (kind_of(old), kind_of(new)) in LEGAL:
        check_transition("a", old, new)
    else:
        with pytest.raises(IllegalTransition, match=f"{kind_of(old)} -> {kind_of(new)}"):
            check_transition("a", old, new)


def test_final_and_live_partition_the_statuses() -> None:
    assert [is_live(s) for s in ALL] == [True, True, False, False, False, False]
    assert [is_final(s) for s in ALL] == [False, False, True, True, True, False]


def test_statuses_encode_with_their_kind() -> None:
    event = StatusChanged(
        agent_id="a", parent_id=None, depth=0, nickname="Ada", status=Completed("done")
    )
    decoded = msgspec.json.decode(msgspec.json.encode(event))
    assert decoded["type"] == "status_changed"
    assert decoded["status"] == {"kind": "completed", "result": "done"}
    assert msgspec.json.decode(msgspec.json.encode(Errored("x")), type=Status) == Errored("x")


def test_nicknames_are_unique_and_get_ordinals_when_the_pool_runs_out() -> None:
    pool = NicknamePool(["Ada", "Alan"])
    names = [pool.take() for _ in range(5)]
    assert names == ["Ada", "Alan", "Ada the 2nd", "Alan the 2nd", "Ada the 3rd"]
    assert len(set(names)) == 5
    assert pool.cycle == 2
    assert pool.take("Grace") == "Grace"
    assert len(pool) == 6


def test_a_released_nickname_is_not_given_to_another_agent_before_the_pool_resets() -> None:
    """Codex keeps ``used_agent_nicknames`` until every name is used, then resets with an
    ordinal (openai/codex ``codex-rs/core/src/agent/registry.rs``,
    ``reserve_agent_nickname``): a closed agent's name never labels a second agent."""
    pool = NicknamePool(["Ada", "Alan", "Grace"])
    assert pool.take() == "Ada"
    pool.release("Ada")
    assert pool.take() == "Alan"
    pool.release("Alan")
    assert pool.take() == "Grace"
    pool.release("Grace")
    # Every name of the cycle is used: the pool resets, with the next ordinal.
    assert pool.take() == "Ada the 2nd"
    assert len(pool) == 1


def test_a_resumed_agent_gets_its_own_nickname_back_verbatim() -> None:
    """Codex restores a resumed agent's stored nickname as the preferred one
    (``resume_agent_from_rollout`` -> ``reserve_agent_nickname_with_preference``)."""
    pool = NicknamePool(["Ada", "Alan"])
    assert pool.take() == "Ada"
    pool.release("Ada")
    assert pool.take("Ada") == "Ada"  # no open agent holds it: verbatim, no ordinal
    assert pool.take() == "Alan"
    assert pool.take("Alan") == "Ada the 2nd"  # held by an open agent: the next name
    pool.release("Ada the 2nd")
    assert pool.take("Ada the 2nd") == "Ada the 2nd"
    assert pool.take() == "Alan the 2nd"  # a resumed name of the cycle is not handed out


def test_ordinals() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th",
        "21st", "22nd", "23rd", "101st", "111th", "112th",
    ]  # fmt: skip
