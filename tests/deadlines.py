"""Running blocking work that could hang (a walk, a read) under a deadline, in tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds blocking work may take before it is a hang (it takes well under 5).
HANG_SECONDS = 60


def within_deadline(work: Callable[[], T], seconds: float = HANG_SECONDS) -> T:
    """``work()`` run in a helper thread; fails the test if it is not done in ``seconds``
    (a hang then fails instead of stalling the suite; the daemon thread is left)."""
    result: list[T] = []
    runner = threading.Thread(target=lambda: result.append(work()), daemon=True)
    runner.start()
    runner.join(seconds)
    assert not runner.is_alive(), f"still running after {seconds} s: a hang"
    return result[0]
