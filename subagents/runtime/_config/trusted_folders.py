"""The folders the user trusts: what a repository's own files may do there.

A cloned repository's ``subagents.toml`` and ``.claude/agents`` are data until
the user trusts its folder (as Claude Code and VS Code do). Trust is given once
per folder, with ``subagents trust [PATH]``, a yes at the terminal prompt, or
``--trust-project``, and kept in ``~/.subagents/trusted-folders.json`` next to
the user's ``config.toml``. Trusting a folder covers its subfolders. Paths are
stored and compared with symlinks resolved, so a link into a trusted folder is
trusted and a link out of one is not.

A store that cannot be read (corrupt JSON, not a file, too big) is treated as
empty, with :attr:`TrustStore.problem` saying why: trust is never assumed, and
a broken store never stops a run.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import attrs
import msgspec

from subagents._paths import project_root_of
from subagents._small_file import FileRefused, read_small_file
from subagents.runtime._config.defaults import TRUST_STORE_MAX_BYTES, TRUST_STORE_PATH

__all__ = ["TrustStore", "TrustedFolder", "load_trust_store", "project_folder"]

_VERSION = 1


class _FolderEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    path: str
    trusted_at: str = ""


class _StoreFile(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """The JSON file, as written: ``{"version": 1, "folders": [{"path", "trusted_at"}]}``."""

    version: int = _VERSION
    folders: list[_FolderEntry] = msgspec.field(default_factory=list)


@attrs.frozen
class TrustedFolder:
    """One trusted folder (symlinks resolved) and when it was trusted (ISO 8601, UTC)."""

    path: Path
    trusted_at: str = ""


def _resolved(folder: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(Path(folder).expanduser())).resolve()


def project_folder(cwd: str | os.PathLike[str]) -> Path:
    """The folder whose trust decides for ``cwd``: its git root, else ``cwd`` (resolved)."""
    return project_root_of(_resolved(cwd))


@attrs.frozen
class TrustStore:
    """The trusted folders of one user, read from (and saved to) ``path``.

    ``problem`` is set when the file existed but could not be used; the store
    is then empty.
    """

    path: Path
    folders: tuple[TrustedFolder, ...] = ()
    problem: str | None = None

    def trusted_by(self, folder: str | os.PathLike[str]) -> TrustedFolder | None:
        """The trusted folder that covers ``folder`` (it or an ancestor), or ``None``."""
        target = _resolved(folder)
        for entry in self.folders:
            if target == entry.path or target.is_relative_to(entry.path):
                return entry
        return None

    def trusts(self, folder: str | os.PathLike[str]) -> bool:
        """Whether ``folder`` is a trusted folder or inside one."""
        return self.trusted_by(folder) is not None

    def with_folder(self, folder: str | os.PathLike[str]) -> TrustStore:
        """This store with ``folder`` trusted (unchanged when it already is itself)."""
        target = _resolved(folder)
        if any(entry.path == target for entry in self.folders):
            return self
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        return attrs.evolve(self, folders=(*self.folders, TrustedFolder(target, now)))

    def without_folder(self, folder: str | os.PathLike[str]) -> TrustStore:
        """This store with ``folder`` no longer trusted (its exact entry removed)."""
        target = _resolved(folder)
        raw = Path(os.path.abspath(Path(folder).expanduser()))
        kept = tuple(e for e in self.folders if e.path not in (target, raw))
        return attrs.evolve(self, folders=kept)

    def save(self) -> None:
        """Write the store atomically (a temporary file renamed over the old one).

        Raises ``OSError`` when the folder cannot be written.
        """
        data = msgspec.json.format(
            msgspec.json.encode(
                _StoreFile(folders=[_FolderEntry(str(e.path), e.trusted_at) for e in self.folders])
            )
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".trusted-folders.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data + b"\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(name, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise


def _entries(raw: Iterable[_FolderEntry]) -> tuple[TrustedFolder, ...]:
    found: dict[Path, TrustedFolder] = {}
    for entry in raw:
        if entry.path.strip() and os.path.isabs(entry.path):
            path = _resolved(entry.path)
            found.setdefault(path, TrustedFolder(path, entry.trusted_at))
    return tuple(found.values())


def load_trust_store(home: str | os.PathLike[str]) -> TrustStore:
    """The trust store of the user whose home folder is ``home``; never raises."""
    path = Path(home) / TRUST_STORE_PATH
    try:
        data = read_small_file(path, TRUST_STORE_MAX_BYTES)
    except FileNotFoundError:
        return TrustStore(path)
    except FileRefused as exc:
        return TrustStore(path, problem=f"{path} {exc.reason}; no folder is trusted")
    except OSError as exc:
        return TrustStore(
            path, problem=f"{path} cannot be read ({exc.strerror or exc}); no folder is trusted"
        )
    try:
        stored = msgspec.json.decode(data, type=_StoreFile)
    except (msgspec.DecodeError, RecursionError) as exc:
        return TrustStore(
            path,
            problem=f"{path} is not a valid trust store ({exc}); no folder is trusted. "
            "Remove it and trust your folders again with `subagents trust PATH`",
        )
    return TrustStore(path, _entries(stored.folders))
