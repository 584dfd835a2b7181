"""Workspace confinement: every path a tool touches stays under the workspace root.

A path is accepted relative to the root or absolute; it is resolved the way the
operating system would (``..`` and symlinks included) and refused if the real
path is outside the root. Resolution alone is not enough, because a directory
can be swapped for a symlink between the check and the use, so files are then
opened by walking the resolved components one at a time from a descriptor of
the root with ``O_NOFOLLOW``: a symlink that appears later makes the open fail
instead of escaping. FIFOs, devices and sockets are refused before they are
opened, and opens use ``O_NONBLOCK``, so nothing here can block on one.

All methods do blocking I/O; tools call them from a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import attrs

from subagents.tools._exceptions import (
    ToolError,
    UnsupportedFileError,
    WorkspaceError,
    WorkspaceEscapeError,
)

__all__ = ["DirectoryListing", "Workspace", "WorkspacePath", "require_regular"]

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _O_CLOEXEC | _O_NOCTTY

#: How deep ``walk`` descends; deeper directories are skipped and counted.
MAX_WALK_DEPTH = 64


def _absolute(root: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(os.fspath(root)))


@attrs.frozen
class WorkspacePath:
    """A path that was inside the workspace when it was resolved.

    ``parts`` are the components below the real root (empty for the root
    itself), free of ``..`` and symlinks at resolution time.
    """

    given: str
    root: str
    parts: tuple[str, ...]

    @property
    def path(self) -> Path:
        """The absolute real path."""
        return Path(self.root, *self.parts)

    @property
    def display(self) -> str:
        """The path relative to the workspace root, as shown to the model."""
        return str(PurePosixPath(*self.parts)) if self.parts else "."

    def child(self, name: str) -> WorkspacePath:
        """The entry ``name`` inside this directory."""
        return attrs.evolve(self, given=f"{self.display}/{name}", parts=(*self.parts, name))


@attrs.frozen
class DirectoryListing:
    """One directory met by :meth:`Workspace.walk`: its entries and an open descriptor."""

    parts: tuple[str, ...]
    fd: int
    entries: tuple[os.DirEntry[str], ...]

    @property
    def display(self) -> str:
        """The directory relative to the workspace root."""
        return str(PurePosixPath(*self.parts)) if self.parts else "."


@attrs.frozen
class Workspace:
    """The directory tree the tools of one agent may read, write and run in."""

    root: Path = attrs.field(converter=_absolute)

    def real_root(self) -> str:
        """The root with symlinks resolved; it must be an existing directory."""
        real = os.path.realpath(self.root)
        if not os.path.isdir(real):
            raise WorkspaceError(f"The workspace root {self.root} is not a directory.")
        return real

    def resolve(self, path: str) -> WorkspacePath:
        """Resolve a path given by the model; refuse it if it leads outside the root."""
        if not isinstance(path, str) or not path.strip():
            raise WorkspaceError("The path is empty; give a path inside the workspace.")
        if "\x00" in path:
            raise WorkspaceError("The path contains a NUL character.")
        root = self.real_root()
        candidate = os.path.join(root, os.path.expanduser(path) if path.startswith("~") else path)
        real = os.path.realpath(candidate)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            raise WorkspaceEscapeError(
                f"The path '{path}' is outside the workspace root ({self.root}); "
                "only paths inside the workspace can be used."
            )
        relative = os.path.relpath(real, root)
        parts = () if relative == os.curdir else tuple(PurePosixPath(relative).parts)
        return WorkspacePath(given=path, root=root, parts=parts)

    # -- opening -----------------------------------------------------------------

    def open_directory(self, target: WorkspacePath) -> int:
        """An open descriptor of a directory inside the workspace; the caller closes it."""
        fd = self._open_root(target)
        try:
            for name in target.parts:
                child = self._open_subdirectory(fd, name, target)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_file(self, target: WorkspacePath) -> tuple[int, os.stat_result]:
        """An open read-only descriptor of a regular file, and its stat; the caller closes it."""
        if not target.parts:
            raise UnsupportedFileError(f"'{target.given}' is a directory, not a file.")
        parent = self._open_parent(target, create=False)
        try:
            return self.open_file_at(parent, target.parts[-1], target.given)
        finally:
            os.close(parent)

    def open_file_at(self, dir_fd: int, name: str, shown: str) -> tuple[int, os.stat_result]:
        """Open the regular file ``name`` in an open directory, refusing anything else."""
        before = self._lstat_at(dir_fd, name, shown)
        require_regular(before, shown)
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _os_error(exc, shown) from None
        try:
            after = os.fstat(fd)
        except OSError as exc:
            os.close(fd)
            raise _os_error(exc, shown) from None
        if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (
            before.st_dev,
            before.st_ino,
        ):
            os.close(fd)
            raise WorkspaceEscapeError(
                f"'{shown}' changed while it was being opened; refusing to use it."
            )
        return fd, after

    def lstat(self, target: WorkspacePath) -> os.stat_result | None:
        """The stat of the entry itself (no symlink following), or ``None`` if absent."""
        if not target.parts:
            return os.stat(target.root)
        parent = self._open_parent(target, create=False)
        try:
            return os.stat(target.parts[-1], dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _os_error(exc, target.given) from None
        finally:
            os.close(parent)

    # -- writing -----------------------------------------------------------------

    def replace_file(self, target: WorkspacePath, data: bytes) -> bool:
        """Write ``data`` as the new content of a file, atomically; return whether it was created.

        Parent directories are created as needed. The data goes to a temporary
        file that is renamed over the target, so an existing symlink or hard
        link at the target is replaced, never written through.
        """
        if not target.parts:
            raise UnsupportedFileError(f"'{target.given}' is a directory, not a file.")
        name = target.parts[-1]
        parent = self._open_parent(target, create=True)
        try:
            try:
                existing: os.stat_result | None = os.stat(
                    name, dir_fd=parent, follow_symlinks=False
                )
            except FileNotFoundError:
                existing = None
            except OSError as exc:
                raise _os_error(exc, target.given) from None
            if existing is not None:
                require_regular(existing, target.given)
            temp = f".{name[:100]}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(
                    temp,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC,
                    0o666,
                    dir_fd=parent,
                )
            except OSError as exc:
                raise _os_error(exc, target.given) from None
            try:
                try:
                    if existing is not None:
                        os.fchmod(fd, stat.S_IMODE(existing.st_mode))
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                finally:
                    os.close(fd)
                os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                if isinstance(exc, OSError):
                    raise _os_error(exc, target.given) from None
                raise
            return existing is None
        finally:
            os.close(parent)

    # -- walking -----------------------------------------------------------------

    def walk(
        self, start: WorkspacePath, *, skip_dirs: frozenset[str] = frozenset()
    ) -> Iterator[DirectoryListing]:
        """Every directory under ``start``, depth first in name order, without following symlinks.

        Each listing's descriptor is valid until the iteration moves on.
        Unreadable directories and directories named in ``skip_dirs`` are skipped.
        """
        fd = self.open_directory(start)
        try:
            yield from self._walk_at(fd, start.parts, skip_dirs, 0)
        finally:
            os.close(fd)

    def _walk_at(
        self, fd: int, parts: tuple[str, ...], skip_dirs: frozenset[str], depth: int
    ) -> Iterator[DirectoryListing]:
        try:
            with os.scandir(fd) as it:
                entries = tuple(sorted(it, key=lambda e: e.name))
        except OSError:
            return
        yield DirectoryListing(parts=parts, fd=fd, entries=entries)
        if depth >= MAX_WALK_DEPTH:
            return
        for entry in entries:
            if entry.name in skip_dirs:
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            try:
                yield from self._walk_at(child, (*parts, entry.name), skip_dirs, depth + 1)
            finally:
                os.close(child)

    # -- internals ---------------------------------------------------------------

    def _open_root(self, target: WorkspacePath) -> int:
        try:
            return os.open(target.root, os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC)
        except OSError as exc:
            raise WorkspaceError(f"The workspace root cannot be opened: {exc.strerror}.") from None

    def _open_parent(self, target: WorkspacePath, *, create: bool) -> int:
        fd = self._open_root(target)
        try:
            for name in target.parts[:-1]:
                if create:
                    try:
                        os.mkdir(name, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                    except OSError as exc:
                        raise _os_error(exc, target.given) from None
                child = self._open_subdirectory(fd, name, target)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    @staticmethod
    def _open_subdirectory(fd: int, name: str, target: WorkspacePath) -> int:
        """Open the subdirectory ``name`` of ``fd`` without following a symlink."""
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):
                raise WorkspaceEscapeError(
                    f"'{target.given}' changed while it was being opened "
                    "(a symlink appeared in it); refusing to use it."
                ) from None
            if exc.errno == errno.ENOTDIR:
                # O_DIRECTORY | O_NOFOLLOW on a symlink also fails with ENOTDIR.
                try:
                    is_link = stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
                except OSError:
                    is_link = False
                if is_link:
                    raise WorkspaceEscapeError(
                        f"'{target.given}' changed while it was being opened "
                        "(a symlink appeared in it); refusing to use it."
                    ) from None
                raise UnsupportedFileError(
                    f"'{target.given}': a component of the path is not a directory."
                ) from None
            raise _os_error(exc, target.given) from None

    @staticmethod
    def _lstat_at(dir_fd: int, name: str, shown: str) -> os.stat_result:
        try:
            return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            raise _os_error(exc, shown) from None


def require_regular(st: os.stat_result, shown: str) -> None:
    """Refuse anything but a regular file, saying what it is instead."""
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise UnsupportedFileError(f"'{shown}' is a directory, not a file; use LS to list it.")
    if stat.S_ISLNK(mode):
        raise WorkspaceEscapeError(
            f"'{shown}' changed while it was being opened (it is now a symlink); "
            "refusing to use it."
        )
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    raise UnsupportedFileError(f"'{shown}' is {kind}; only regular files can be used.")


def _os_error(exc: OSError, shown: str) -> ToolError:
    if exc.errno == errno.ENOENT:
        return ToolError(f"'{shown}' does not exist.")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ToolError(f"Permission denied: '{shown}'.")
    if exc.errno == errno.ELOOP:
        return WorkspaceEscapeError(f"'{shown}' is a symlink that cannot be followed safely.")
    if exc.errno == errno.ENOTDIR:
        return UnsupportedFileError(f"'{shown}': a component of the path is not a directory.")
    if exc.errno == errno.EISDIR:
        return UnsupportedFileError(f"'{shown}' is a directory, not a file.")
    return ToolError(f"'{shown}': {exc.strerror or exc}.")
