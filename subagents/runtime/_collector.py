"""Python's cycle collector while a runtime is open: the policy of ``[collector]``.

The collector is the process's, and a process may hold several runtimes (a
test suite, a Ray worker hosting one in a thread), so the settings are shared
and counted: the first runtime that applies a policy saves the thresholds it
finds, and the last one to close puts them back unless the application set
others meanwhile (and unfreezes what was frozen, unless the application had
frozen objects itself before the first: those stay frozen, as the application
left them). A policy only ever raises the youngest generation's threshold: a
higher one, or 0 (automatic collection off), is left as the application set
it. While more than one is open, the highest threshold applied holds. All of
it is guarded by one lock, since runtimes may run in several threads.

``gc.freeze()`` moves every object the collector tracks to a permanent
generation that no collection walks; it costs no walk itself. Objects frozen
are still freed when their last reference goes; only cyclic garbage among them
waits for the unfreeze at close, which is why ``freeze`` is a choice for large
batch runs and not the default.
"""

from __future__ import annotations

import gc
import threading
from typing import final

from subagents.runtime._config.values import CollectorConfig

__all__ = ["CollectorGuard", "collector_statistics"]

_LOCK = threading.Lock()
#: The thresholds found before the first runtime applied a policy.
_saved: tuple[int, int, int] | None = None
#: The youngest threshold a runtime set last (``None``: none was set).
_set: int | None = None
#: How many open runtimes apply a policy.
_holders = 0
#: Whether any of them froze objects.
_frozen = False
#: Whether the application had frozen objects itself before: then nothing is unfrozen.
_frozen_before = False


@final
class CollectorGuard:
    """Applies ``config`` while entered; :meth:`spawned` counts spawns for ``freeze``."""

    __slots__ = ("_config", "_entered", "_since", "freezes")

    def __init__(self, config: CollectorConfig) -> None:
        self._config = config
        self._entered = False
        self._since = 0
        #: How many times this runtime called ``gc.freeze()``.
        self.freezes = 0

    def __repr__(self) -> str:
        return f"<CollectorGuard {self._config.policy} freezes={self.freezes}>"

    def __enter__(self) -> CollectorGuard:
        global _saved, _set, _holders, _frozen_before
        if self._config.policy == "default":
            return self
        with _LOCK:
            if _holders == 0:
                _saved = gc.get_threshold()
                _frozen_before = gc.get_freeze_count() > 0
            _holders += 1
            youngest, *older = gc.get_threshold()
            # Only ever raised: a higher threshold the application chose stays, and 0 (the
            # application switched automatic collection off) is not switched back on.
            if 0 < youngest < self._config.threshold:
                gc.set_threshold(self._config.threshold, *older)
                _set = self._config.threshold
        self._entered = True
        return self

    def spawned(self) -> None:
        """An agent was spawned: under ``freeze``, freeze after every ``freeze_every``."""
        if not self._entered or self._config.policy != "freeze":
            return
        self._since += 1
        if self._since >= self._config.freeze_every:
            self._since = 0
            self.freeze()

    def freeze(self) -> None:
        """Move every tracked object to the permanent generation (the ``freeze`` policy)."""
        global _frozen
        if not self._entered or self._config.policy != "freeze":
            return
        with _LOCK:
            gc.freeze()
            _frozen = True
        self.freezes += 1

    def __exit__(self, *exc_info: object) -> None:
        global _saved, _set, _holders, _frozen
        if not self._entered:
            return
        self._entered = False
        with _LOCK:
            _holders -= 1
            if _holders == 0:
                # Put back only what is still ours: thresholds the application set
                # meanwhile stay.
                if _saved is not None and _set is not None and gc.get_threshold()[0] == _set:
                    gc.set_threshold(*_saved)
                _saved = _set = None
                if _frozen and not _frozen_before:
                    gc.unfreeze()
                    _frozen = False


def collector_statistics() -> tuple[tuple[int, int, int], int]:
    """The collector's thresholds and the number of frozen objects now (for tests and benches)."""
    return gc.get_threshold(), gc.get_freeze_count()
