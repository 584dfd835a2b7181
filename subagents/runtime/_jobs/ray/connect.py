"""Importing Ray (an optional extra) and reaching its cluster, each with one clear error.

Ray is imported only here, and only when a job asks for the Ray backend: the
local backend needs nothing. A missing Ray raises
:class:`~subagents.jobs.JobBackendUnavailable` naming the extra to install; an
address that does not answer raises it naming the address, within
``connect_timeout``. ``ray.init`` itself retries an unreachable cluster for
minutes, so a ``host:port`` address is first probed with a TCP connection
under that deadline, and ``ray.init`` then runs in a worker thread under the
same deadline (never on the Trio thread).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

import trio

from subagents.jobs import JobBackendUnavailable

__all__ = ["INSTALL_HINT", "connect", "import_ray", "shutdown"]

#: What to run when Ray is missing.
INSTALL_HINT: Final = "pip install 'subagents[ray]'"


def import_ray() -> ModuleType:
    """The ``ray`` module, or :class:`JobBackendUnavailable` naming the extra to install."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise JobBackendUnavailable(
            f"The Ray backend needs Ray, which is not installed here ({exc}): "
            f"run `{INSTALL_HINT}`, or use --backend local."
        ) from exc


def _host_port(address: str) -> tuple[str, int] | None:
    """The host and port of a ``host:port`` or ``ray://host:port`` address (else ``None``)."""
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _unreachable(address: str, timeout: float, why: str) -> JobBackendUnavailable:
    return JobBackendUnavailable(
        f"Could not reach the Ray cluster at {address} within {timeout:g} s ({why}): "
        "check --address, or start a cluster there with `ray start --head`."
    )


async def connect(ray: ModuleType, address: str | None, timeout: float) -> bool:
    """Join the Ray cluster at ``address``; return whether this call started Ray here.

    A process joins one cluster: once it has (``ray.init`` by the embedding
    program, or an earlier job), that cluster is used, after ``address`` is
    checked to answer. ``None`` otherwise starts a local cluster (stopped by
    :func:`shutdown` when the job ends).
    """
    if address is not None:
        target = _host_port(address)
        if target is not None:
            with trio.move_on_after(timeout) as probe:
                try:
                    stream = await trio.open_tcp_stream(*target)
                except OSError as exc:
                    raise _unreachable(address, timeout, exc.strerror or str(exc)) from exc
                await stream.aclose()
            if probe.cancelled_caught:
                raise _unreachable(address, timeout, "no answer")
    if ray.is_initialized():
        return False

    def init() -> None:
        ray.init(
            address=address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )

    with trio.move_on_after(timeout) as scope:
        try:
            await trio.to_thread.run_sync(init, abandon_on_cancel=True)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise _unreachable(address or "a new local cluster", timeout, str(exc)) from exc
    if scope.cancelled_caught:
        raise _unreachable(address or "a new local cluster", timeout, "ray.init did not return")
    return True


async def shutdown(ray: ModuleType, timeout: float) -> None:
    """Stop the Ray this process started (in a worker thread, at most ``timeout`` seconds)."""
    with trio.CancelScope(shield=True), trio.move_on_after(timeout):
        await trio.to_thread.run_sync(ray.shutdown, abandon_on_cancel=True)
