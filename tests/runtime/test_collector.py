"""The ``[collector]`` policy: what a runtime does to Python's cycle collector while open."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import (
    CollectorConfig,
    CollectorGuard,
    ConfigError,
    ScriptedProvider,
    load_config,
)
from tests.runtime.world import World


@pytest.fixture(autouse=True)
def restore_collector() -> Iterator[None]:
    """Each test starts and ends with the thresholds it found and nothing frozen (another
    library in the test process, Ray's driver on Python 3.12 for one, may have frozen
    objects before: they are unfrozen, as this process's tests own its collector)."""
    before = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.set_threshold(*before)
    gc.unfreeze()


def test_the_default_policy_touches_nothing() -> None:
    before = gc.get_threshold()
    with CollectorGuard(CollectorConfig(policy="default")) as guard:
        assert gc.get_threshold() == before
        guard.spawned()
        guard.freeze()
        assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_relaxed_raises_the_youngest_threshold_and_puts_it_back() -> None:
    before = gc.get_threshold()
    with CollectorGuard(CollectorConfig(policy="relaxed", threshold=12_345)):
        assert gc.get_threshold() == (12_345, *before[1:])
    assert gc.get_threshold() == before


@pytest.mark.parametrize("chosen", [0, 200_000])
def test_a_threshold_the_application_chose_higher_or_off_stays(chosen: int) -> None:
    # 0 switches automatic collection off: a runtime must not switch it back on, and a
    # threshold higher than the policy's was a choice too.
    before = gc.get_threshold()
    gc.set_threshold(chosen, *before[1:])
    with CollectorGuard(CollectorConfig(policy="relaxed", threshold=50_000)):
        assert gc.get_threshold()[0] == chosen
    assert gc.get_threshold() == (chosen, *before[1:])


def test_thresholds_the_application_set_while_a_runtime_was_open_stay() -> None:
    before = gc.get_threshold()
    with CollectorGuard(CollectorConfig(policy="relaxed", threshold=50_000)):
        gc.set_threshold(3_000, *before[1:])
    assert gc.get_threshold() == (3_000, *before[1:])


def test_nested_runtimes_restore_what_the_first_one_found() -> None:
    before = gc.get_threshold()
    outer = CollectorGuard(CollectorConfig(policy="relaxed", threshold=20_000))
    inner = CollectorGuard(CollectorConfig(policy="freeze", threshold=30_000, freeze_every=1))
    with outer:
        with inner:
            assert gc.get_threshold()[0] == 30_000
            inner.spawned()
            assert gc.get_freeze_count() > 0
        # the inner one closed: the outer still holds, and what was frozen stays frozen
        assert gc.get_threshold()[0] == 30_000
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_what_the_application_froze_itself_stays_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not by the frozen count alone: frozen objects that other code lets go are freed
    # meanwhile (in a full run, a few dozen), so the count may drop without any unfreeze.
    unfrozen: list[bool] = []
    real_unfreeze = gc.unfreeze
    monkeypatch.setattr(gc, "unfreeze", lambda: unfrozen.append(True) or real_unfreeze())
    keep = [[] for _ in range(10)]  # objects the application froze before any runtime
    gc.freeze()
    with CollectorGuard(CollectorConfig(policy="freeze", freeze_every=1)) as guard:
        guard.spawned()
    assert guard.freezes == 1
    assert unfrozen == []
    assert gc.get_freeze_count() > 0
    assert keep


def test_freeze_counts_spawns() -> None:
    with CollectorGuard(CollectorConfig(policy="freeze", freeze_every=3)) as guard:
        for _ in range(7):
            guard.spawned()
        assert guard.freezes == 2


async def test_a_runtime_applies_its_policy_while_open_and_freezes_after_its_spawns(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    world.extra["collector"] = CollectorConfig(policy="freeze", threshold=40_000, freeze_every=2)
    before = gc.get_threshold()
    provider = ScriptedProvider(lambda request: testing.say("done"))
    async with world.open(provider) as rt:
        assert gc.get_threshold() == (40_000, *before[1:])
        ids = [(await rt.spawn("general-purpose", "Say done.")).agent_id for _ in range(5)]
        await rt.wait(ids, timeout=10, mode="all")
        assert rt.services.collector.freezes == 2
        assert gc.get_freeze_count() > 0
        assert all(rt.status(agent_id) == Completed("done") for agent_id in ids)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


async def test_a_runtime_relaxes_the_collector_unless_told_otherwise(tmp_path: Path) -> None:
    """Its agents stay open after their runs: with Python's own threshold the collector
    walks them again and again, so ``relaxed`` is what a runtime applies by default."""
    assert CollectorConfig().policy == "relaxed"
    before = gc.get_threshold()
    provider = ScriptedProvider(lambda request: testing.say("done"))
    async with World(tmp_path).open(provider):
        assert gc.get_threshold() == (CollectorConfig().threshold, *before[1:])
    assert gc.get_threshold() == before
    world = World(tmp_path / "untouched")
    world.extra["collector"] = CollectorConfig(policy="default")
    async with world.open(provider):
        assert gc.get_threshold() == before


async def test_a_runtime_that_fails_still_puts_the_collector_back(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.extra["collector"] = CollectorConfig(policy="relaxed")
    before = gc.get_threshold()
    with pytest.raises(RuntimeError, match="the body failed"):
        async with world.open(ScriptedProvider([])):
            await trio.lowlevel.checkpoint()
            raise RuntimeError("the body failed")
    assert gc.get_threshold() == before


def test_the_policy_is_read_from_the_user_file_and_the_environment(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".subagents").mkdir(parents=True)
    project.mkdir()
    (home / ".subagents" / "config.toml").write_text(
        '[collector]\npolicy = "freeze"\nfreeze_every = 500\n'
    )
    config = load_config(cwd=project, home=home, env={})
    assert config.collector == CollectorConfig(policy="freeze", freeze_every=500)
    env = {"SUBAGENTS_COLLECTOR__POLICY": "relaxed", "SUBAGENTS_COLLECTOR__THRESHOLD": "80000"}
    config = load_config(cwd=project, home=home, env=env)
    assert (config.collector.policy, config.collector.threshold) == ("relaxed", 80_000)


def test_an_untrusted_project_cannot_change_the_collector(tmp_path: Path) -> None:
    """A repository could set threshold = 1 and make every allocation run the collector."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    (project / "subagents.toml").write_text('[collector]\npolicy = "freeze"\nthreshold = 1\n')
    config = load_config(cwd=project, home=home, env={})
    assert config.collector == CollectorConfig()
    assert config.project is not None
    assert set(config.project.ignored) == {
        "subagents.toml collector.policy",
        "subagents.toml collector.threshold",
    }


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        ({"policy": "off"}, "collector.policy"),
        ({"threshold": 0}, "collector.threshold"),
        ({"threshold": 10**9}, "collector.threshold"),
        ({"threshold": True}, "collector.threshold"),
        ({"freeze_every": 0}, "collector.freeze_every"),
    ],
)
def test_a_wrong_value_names_the_key_and_what_is_expected(
    fields: dict[str, object], key: str
) -> None:
    with pytest.raises(ConfigError, match=key):
        CollectorConfig(**fields)  # type: ignore[arg-type]
