"""Ray missing, or its address unreachable: one clear line, within a deadline.

Issue 19 item 2: "Ray missing or unreachable gives one clear line naming the
extra to install or the address tried". ``ray.init`` alone retries an
unreachable cluster for minutes (measured: still retrying after 70 s), so the
address is probed first under ``connect_timeout``.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
import trio
import trio.testing

from subagents.jobs import JobBackendUnavailable, RowOutcome, RowRequest
from subagents.runtime import open_runtime
from subagents.runtime._jobs.ray import RayBackend, RayOptions
from subagents.runtime._jobs.ray.connect import INSTALL_HINT, connect, import_ray

pytestmark = pytest.mark.timeout(60)


async def run_backend(backend: RayBackend) -> None:
    send_requests, receive_requests = trio.open_memory_channel[RowRequest](1)
    send_outcomes, receive_outcomes = trio.open_memory_channel[RowOutcome](1)
    async with send_requests, receive_requests, send_outcomes, receive_outcomes:
        await backend.run(receive_requests, send_outcomes, lambda event: None)


async def test_without_ray_the_backend_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(JobBackendUnavailable) as caught:
        await run_backend(RayBackend(opener=open_runtime, cwd=tmp_path))
    message = str(caught.value)
    assert "\n" not in message
    assert INSTALL_HINT in message
    assert "pip install 'subagents[ray]'" in message


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_an_unreachable_address_names_the_address_tried_within_the_deadline(
    tmp_path: Path,
) -> None:
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'subagents[ray]'")
    address = f"127.0.0.1:{closed_port()}"
    backend = RayBackend(
        RayOptions(address=address, connect_timeout=5.0), opener=open_runtime, cwd=tmp_path
    )
    with trio.fail_after(10), pytest.raises(JobBackendUnavailable) as caught:
        await run_backend(backend)
    message = str(caught.value)
    assert "\n" not in message
    assert f"Could not reach the Ray cluster at {address} within 5 s" in message
    assert "ray start --head" in message


async def test_an_address_that_never_answers_fails_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'subagents[ray]'")

    async def never(host: str, port: int) -> trio.SocketStream:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    monkeypatch.setattr(trio, "open_tcp_stream", never)  # a SYN no one answers
    with pytest.raises(
        JobBackendUnavailable, match=r"at 10\.0\.0\.1:6379 within 2 s \(no answer\)"
    ):
        await connect(ray, "10.0.0.1:6379", 2.0)


def test_import_ray_returns_the_module_when_installed() -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'subagents[ray]'")
    assert import_ray() is ray
