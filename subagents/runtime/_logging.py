"""Logging: JSON lines under the state folder, readable lines on stderr, secrets masked.

:func:`open_log` gives a :class:`RuntimeLog` for one session. It writes every
line at ``logging.file_level`` or above to ``<state_dir>/logs/<session_id>.jsonl``
(appended; line by line, or, while the runtime's flusher runs, the lines of one
scheduler pass in one write at its end) and every line at
``logging.stderr_level`` or above to stderr in a readable form::

    with open_log(config, session_id) as log:
        agent_log = log.for_agent(agent_id="a1b2", nickname="Ada", depth=1)
        agent_log.info("turn started", turn=3)

Loggers are structlog bound loggers of a wrapper class of this module's: this
module never calls ``structlog.configure``, because the program embedding the
runtime owns structlog's global configuration. Every line carries
``agent_id``, ``nickname`` and ``depth`` (``null`` outside an agent).

Nothing secret is logged: :func:`redact` runs on every line, after exceptions
are formatted and before anything is written. It replaces the value of any
key that names a secret (``api_key``, ``authorization``, ``x-api-key``,
``password``, ``token``, ``secret``, ``cookie``...) and masks, in every string
at any depth, Anthropic keys (``sk-ant-...``), ``Bearer`` tokens, ``key: value``
pairs of secret headers, and the current values of every secret environment
variable (``ANTHROPIC_API_KEY``, ``*_TOKEN``...). What a secret is, and the
masking itself, belong to :mod:`subagents.tools._secrets`. Objects that are
not plain data are logged as their masked ``repr``.

Logging never stops the runtime: when the log file cannot be opened or
written (disk full, folder deleted or not writable), that is said once on
stderr and logging goes on to stderr only.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TextIO, cast, final

import attrs
import msgspec
import structlog
from structlog.typing import EventDict, FilteringBoundLogger

from subagents._visible import visible
from subagents.tools import (
    REDACTED,
    SECRET_ENV_VARS,
    is_secret_key,
    mask_text,
    secret_values,
)

if TYPE_CHECKING:
    from subagents.runtime._config.values import RuntimeConfig

__all__ = [
    "LOG_FILE_SUFFIX",
    "REDACTED",
    "SECRET_ENV_VARS",
    "LogStatistics",
    "RuntimeLog",
    "is_secret_key",
    "mask_text",
    "open_log",
    "redact",
]

#: A session's log is ``<state_dir>/logs/<session_id><LOG_FILE_SUFFIX>``.
LOG_FILE_SUFFIX: Final = ".jsonl"

_LEVELS: Final = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
_LEVEL_ALIASES: Final = {"warn": "warning", "exception": "error", "fatal": "critical"}
#: Each logger method's level: what the sink compares with its levels.
_METHOD_LEVELS: Final = {
    name: _LEVELS[_LEVEL_ALIASES.get(name, name)] for name in (*_LEVELS, *_LEVEL_ALIASES)
}

_MAX_DEPTH: Final = 12


def redact(value: Any, secrets: Iterable[str] = (), *, env: Mapping[str, str] | None = None) -> Any:
    """A copy of ``value`` safe to log: plain JSON data with every secret masked.

    Mappings, lists, tuples and sets are copied with secret keys' values
    replaced by :data:`REDACTED` and strings masked (:func:`mask_text`);
    numbers, booleans and ``None`` are kept; anything else becomes its masked
    ``repr``. ``env`` (default ``os.environ``) supplies the current values of
    its secret variables (:func:`~subagents.tools.is_secret_variable`), masked too.
    """
    known = (*secrets, *secret_values(os.environ if env is None else env))
    return _redact(value, known, 0)


#: What :func:`_redact` keeps as it is, and what it copies as a list (tuples: an ``X | Y``
#: union would be built at every call).
_SCALARS: Final = (bool, int, float)
_SEQUENCES: Final = (list, tuple, set, frozenset)


def _redact(value: Any, secrets: tuple[str, ...], depth: int, masks: _Masks | None = None) -> Any:
    if value is None or isinstance(value, _SCALARS):
        return value
    if isinstance(value, str):
        return mask_text(value, secrets) if masks is None else masks.text(value)
    if depth >= _MAX_DEPTH:
        return "[...]"
    # Before Mapping, whose check is an ABC's (slow): no sequence here is a mapping.
    if isinstance(value, _SEQUENCES):
        if masks is not None:
            # A list of names (an agent's tools): each masked once, then looked up.
            texts = masks._texts
            names: list[Any] = []
            for item in value:
                if type(item) is not str:
                    break
                masked = texts.get(item)
                names.append(masks.text(item) if masked is None else masked)
            else:
                return names
        return [_redact(item, secrets, depth + 1, masks) for item in value]
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if masks is None:
                name = mask_text(key if isinstance(key, str) else _safe_repr(key), secrets)
                secret_key = is_secret_key(name)
            else:
                name, secret_key = masks.key(key if isinstance(key, str) else _safe_repr(key))
            secret = secret_key and item is not None and item != ""
            out[name] = REDACTED if secret else _redact(item, secrets, depth + 1, masks)
        return out
    if isinstance(value, bytes | bytearray):
        return mask_text(bytes(value).decode("utf-8", "replace"), secrets)
    if isinstance(value, Path):
        return mask_text(str(value), secrets)
    if isinstance(value, BaseException):
        return mask_text(f"{type(value).__name__}: {_safe_str(value)}", secrets)
    return mask_text(_safe_repr(value), secrets)


#: Strings up to this length have their masked form remembered (ids, names, statuses).
_MASK_CACHE_CHARS: Final = 256
#: Remembered strings and keys per set of secrets; emptied when full.
_MASK_CACHE_SIZE: Final = 4096


def _backing_dict(env: Mapping[str, str]) -> dict[Any, Any] | None:
    """The plain dict that holds ``env``'s items, to compare at C speed: ``env`` itself,
    ``os.environ``'s own (its items as bytes), or ``None`` for any other mapping."""
    if type(env) is dict:
        return env
    if isinstance(env, os._Environ):
        data = getattr(env, "_data", None)
        if type(data) is dict:
            return data
    return None


@final
class _Masks:
    """:func:`mask_text` and :func:`is_secret_key` remembered, for one set of secret values.

    A log line repeats the same keys (``agent_id``, ``status``...) and many of
    the same short values (ids, nicknames, statuses): masking each once per
    set of secrets gives every line the same text :func:`redact` would, for
    a fraction of the regular-expression work. The secrets are the values of
    the secret variables of ``env`` when the line is logged: the cache is
    dropped whenever they change.
    """

    __slots__ = ("_backing", "_env", "_keys", "_snapshot", "_texts", "secrets")

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._backing = _backing_dict(env)
        self._snapshot: object = None
        self.secrets: tuple[str, ...] = ()
        self._texts: dict[str, str] = {}
        self._keys: dict[str, tuple[str, bool]] = {}

    def refresh(self) -> None:
        """Read the secret values again if the environment changed since the last line.

        A plain dict, and ``os.environ``'s own, are compared with a copy in C
        (a fraction of a microsecond); any other mapping by its items (``os.environ``
        read that way costs about 15 us for 35 variables, on every line).
        """
        backing = self._backing
        if backing is not None:
            if backing == self._snapshot:
                return
            snapshot: object = dict(backing)
        else:
            snapshot = tuple(self._env.items())
            if snapshot == self._snapshot:
                return
        self._snapshot = snapshot
        self.secrets = secret_values(self._env)
        self._texts.clear()
        self._keys.clear()

    def text(self, value: str) -> str:
        if len(value) > _MASK_CACHE_CHARS:
            return mask_text(value, self.secrets)
        masked = self._texts.get(value)
        if masked is None:
            if len(self._texts) >= _MASK_CACHE_SIZE:
                self._texts.clear()
            masked = self._texts[value] = mask_text(value, self.secrets)
        return masked

    def key(self, key: str) -> tuple[str, bool]:
        known = self._keys.get(key)
        if known is None:
            if len(self._keys) >= _MASK_CACHE_SIZE:
                self._keys.clear()
            name = mask_text(key, self.secrets)
            known = self._keys[key] = (name, is_secret_key(name))
        return known


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:  # a broken __repr__ must not break logging
        return f"<{type(value).__name__} (unrepresentable)>"


def _safe_str(value: object) -> str:
    try:
        return str(value)
    except Exception:
        return _safe_repr(value)


# --------------------------------------------------------------------------- the finish


_PLAIN: Final = frozenset({int, float, bool})


@final
class _Clock:
    """ISO 8601 UTC timestamps with microseconds (``2026-11-28T01:02:03.000004Z``): the
    date and time of a second are formatted once, not at every line."""

    __slots__ = ("_prefix", "_second")

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def now(self) -> str:
        stamp = time.time()
        second = int(stamp)
        if second != self._second:
            self._second = second
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._prefix}.{int((stamp - second) * 1e6):06d}Z"


@final
class _Finish:
    """What every line goes through before :class:`_Sink` writes it: it names the agent
    (``null`` outside one), adds the level and the time, formats a traceback and
    masks every secret (what :func:`redact` gives, remembered).

    One step instead of six processors: a line is a dozen short strings and numbers,
    and almost every key and short value of a line was masked before, so a line
    costs a few dictionary lookups, not six calls and a copy each.
    """

    __slots__ = ("_clock", "_masks")

    def __init__(self, env: Mapping[str, str]) -> None:
        self._masks = _Masks(env)
        self._clock = _Clock()

    def line(self, method_name: str, event_dict: EventDict) -> dict[str, Any]:
        """``event_dict`` finished: ``timestamp``, ``level`` and ``event`` first (what a
        reader scans for), then the rest in order, every secret masked. ``event_dict`` is
        not changed."""
        if "exc_info" in event_dict:
            event_dict = structlog.processors.format_exc_info(None, method_name, dict(event_dict))
        masks = self._masks
        masks.refresh()
        keys, texts = masks._keys, masks._texts
        # Made in the order of the line; the three first are set in place below.
        cleaned: dict[str, Any] = {"timestamp": None, "level": None, "event": None}
        for key, item in event_dict.items():
            known = keys.get(key) if type(key) is str else None
            if known is None:
                known = masks.key(key if isinstance(key, str) else _safe_repr(key))
            name, secret_key = known
            if secret_key and item is not None and item != "":
                cleaned[name] = REDACTED
            elif type(item) is str:
                masked = texts.get(item)
                cleaned[name] = masks.text(item) if masked is None else masked
            elif item is None or type(item) in _PLAIN:
                cleaned[name] = item
            else:
                cleaned[name] = _redact(item, masks.secrets, 1, masks)
        if "event" not in event_dict:
            del cleaned["event"]
        for name in _AGENT_KEYS:
            if name not in event_dict:
                cleaned[name] = None
        # In place: a ``level`` or ``timestamp`` of the caller's is replaced (the time is
        # the runtime's).
        cleaned["level"] = _LEVEL_ALIASES.get(method_name, method_name)
        cleaned["timestamp"] = self._clock.now()
        return cleaned


#: Every line names the agent (``null`` outside one).
_AGENT_KEYS: Final = ("agent_id", "nickname", "depth")


_LINE_ENCODER: Final = msgspec.json.Encoder(enc_hook=str)


def _json_line(event: dict[str, Any]) -> bytes:
    """``event`` as one line of ASCII JSON: msgspec's encoding, or the standard library's
    (``ensure_ascii``) for a line holding anything outside ASCII, so no character in a
    log line can reorder or hide what a terminal shows of it (bidi controls and the like)."""
    try:
        line: bytes | None = _LINE_ENCODER.encode(event)
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError):  # not for msgspec
        line = None
    if line is not None and line.isascii():
        return line + b"\n"
    return json.dumps(event, ensure_ascii=True, default=str).encode("ascii") + b"\n"


# --------------------------------------------------------------------------- the sink


@attrs.frozen
class LogStatistics:
    """How many lines went where, and whether the log file had to be given up."""

    file_lines: int
    stderr_lines: int
    file_path: Path | None
    file_active: bool
    file_error: str | None


_STDERR_SKIP: Final = frozenset(
    {"event", "level", "timestamp", "agent_id", "nickname", "depth", "session_id", "exception"}
)


def _stderr_value(value: Any) -> str:
    if isinstance(value, str) and value and not any(c.isspace() for c in value):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _readable(event: Mapping[str, Any]) -> str:
    """One line for a person: ``12:00:01 info    [Ada d1] turn started turn=3``."""
    stamp = str(event.get("timestamp") or "")
    clock = stamp[11:19] if len(stamp) >= 19 else time.strftime("%H:%M:%S")
    level = str(event.get("level", "info"))
    who = event.get("nickname") or event.get("agent_id")
    agent = f"[{who} d{event.get('depth')}] " if who is not None else ""
    rest = " ".join(
        f"{key}={_stderr_value(value)}" for key, value in event.items() if key not in _STDERR_SKIP
    )
    line = f"{clock} {level:<8} {agent}{event.get('event', '')}"
    if rest:
        line += " " + rest
    exception = event.get("exception")
    if exception:
        line += "\n" + str(exception).rstrip()
    # Hook output, tool arguments and file names reach the log: controls shown as signs.
    return visible(line, newlines=True)


#: Bytes of file lines a sink holds for the end of a pass at most: past it, they are
#: written at once (a pass that logs more is rare, and its lines wait no longer).
_HELD_BYTES: Final = 64 * 1024


def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``; a file deleted under us is an error, not a silent loss."""
    written = os.write(fd, data)
    if written < len(data):  # a short write (a signal, a full disk): the rest, in turn
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]
    if os.fstat(fd).st_nlink == 0:  # writes to a deleted file succeed, and are lost
        raise OSError(errno.ENOENT, "the file or its folder was deleted")


@final
class _Sink:
    """The logger structlog wraps: finishes each line (:class:`_Finish`) and writes it out."""

    def __init__(
        self,
        *,
        path: Path | None,
        file_level: int,
        stderr_level: int,
        stderr: TextIO | None,
        finish: _Finish,
    ) -> None:
        self._finish = finish
        self._path = path
        self._file_level = file_level
        self._stderr_level = stderr_level
        self._stderr = stderr
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._file_lines = 0
        self._stderr_lines = 0
        self._file_error: str | None = None
        self._closed = False
        # Lines held for the end of the pass (see batch_with): written in one write, with
        # one fstat, by the flusher's flush; only the thread that asked holds lines.
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._want: Callable[[_Sink], bool] | None = None
        self._owner: int | None = None
        if path is not None:
            self._open(path)

    @property
    def path(self) -> Path | None:
        return self._path

    def batch_with(self, want: Callable[[_Sink], bool] | None) -> None:
        """Hold file lines logged in this thread until the end of their pass: ``want(self)``
        asks for a :meth:`flush` there, and says ``False`` when it will not give one (the
        line is then written at once). ``None``: write every line at once again."""
        with self._lock:
            self._flush_held()
            self._want = want
            self._owner = None if want is None else threading.get_ident()

    def flush(self) -> None:
        """Write the lines held back, in one write (the flusher calls it at a pass's end)."""
        with self._lock:
            self._flush_held()

    def _flush_held(self) -> None:
        held = self._held
        if held:
            # Written, then let go: an interrupt in the write leaves them held, not lost.
            self._write_file(held[0] if len(held) == 1 else b"".join(held), len(held))
            self._held = []
            self._held_bytes = 0

    def _hold(self, data: bytes) -> bool:
        """Keep ``data`` for the end of the pass; ``False``: write it now."""
        want = self._want
        if want is None or threading.get_ident() != self._owner:
            return False
        size = self._held_bytes + len(data)
        if size > _HELD_BYTES or not (self._held or want(self)):
            return False
        self._held.append(data)
        self._held_bytes = size
        return True

    def _open(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            self._give_up(exc)

    def _give_up(self, exc: OSError) -> None:
        """Stop writing the file and say so on stderr, once."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._file_error is not None:
            return
        reason = exc.strerror or type(exc).__name__
        self._file_error = reason
        self._write_stderr(
            f"subagents: cannot write the log file {self._path}: {reason}; "
            "logging continues on stderr only"
        )

    def _write_stderr(self, text: str) -> None:
        stream = self._stderr if self._stderr is not None else sys.stderr
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass  # stderr is closed or gone: there is nowhere left to say anything

    def _write_file(self, data: bytes, lines: int = 1) -> None:
        fd = self._fd
        if fd is None:
            return
        try:
            _write_all(fd, data)
        except OSError as exc:
            self._give_up(exc)
        else:
            self._file_lines += lines

    def emit(self, method_name: str, event_dict: EventDict) -> None:
        """Finish the line of a call to ``method_name`` and write it to the file and
        stderr, as their levels say."""
        level = _METHOD_LEVELS.get(method_name, 20)
        event = self._finish.line(method_name, event_dict)
        with self._lock:
            try:
                if self._fd is not None and level >= self._file_level:
                    data = _json_line(event)
                    if not self._hold(data):
                        self._flush_held()  # the lines before it first
                        self._write_file(data)
                if level >= self._stderr_level:
                    self._write_stderr(_readable(event))
                    self._stderr_lines += 1
            except Exception as exc:  # a line that cannot be rendered is dropped, not raised
                self._write_stderr(f"subagents: a log line could not be written: {exc!r}")

    def close(self) -> None:
        with self._lock:
            self._flush_held()
            self._closed = True
            self._want = None
            fd, self._fd = self._fd, None
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def statistics(self) -> LogStatistics:
        self.flush()  # what it says is what the file holds
        return LogStatistics(
            file_lines=self._file_lines,
            stderr_lines=self._stderr_lines,
            file_path=self._path,
            file_active=self._fd is not None,
            file_error=self._file_error,
        )


# --------------------------------------------------------------------------- the loggers


def _straight_to_sink(
    self: Any, method_name: str, event: str | None = None, **event_kw: Any
) -> None:
    """A line from a runtime's bound logger: its context and keywords handed to the sink,
    without structlog's processor chain (copying the keywords twice, checking each
    processor's return, looking the sink's method up by name).

    structlog documents ``_proxy_to_logger`` as the method a wrapper class replaces.
    """
    self._logger.emit(method_name, _event_dict(self._context, event, event_kw))


def _event_dict(
    context: Mapping[str, Any], event: str | None, kw: Mapping[str, Any]
) -> dict[str, Any]:
    """A call's fields before the finish: the bound context, the call's keywords over it,
    then ``event`` (none when ``None``)."""
    if event is None:
        return {**context, **kw}
    return {**context, **kw, "event": event}


def _interpolated(event: str | None, args: tuple[Any, ...]) -> str | None:
    """``event % args`` as structlog's level methods make it (one non-empty mapping:
    named fields)."""
    if event is None:
        return None
    if len(args) == 1 and isinstance(args[0], Mapping) and args[0]:
        return event % args[0]
    return event % args


def _level_method(name: str) -> Any:
    """The method of a level a logger writes: its line handed to the sink at once.

    What structlog's level method and :func:`_straight_to_sink` do together, less a
    call and a second packing of the keywords: two lines an agent at ``info``.
    """

    def method(self: Any, event: str | None = None, *args: Any, **kw: Any) -> None:
        if args:
            event = _interpolated(event, args)
        self._logger.emit(name, _event_dict(self._context, event, kw))

    method.__name__ = name
    return method


def _wrapper(name: str, level: int) -> type[FilteringBoundLogger]:
    """The bound logger class whose lowest level is ``level``: its lines go straight to
    the sink; the methods below it stay structlog's, which do nothing."""
    methods: dict[str, Any] = {"_proxy_to_logger": _straight_to_sink, "__slots__": ()}
    for method_name, method_level in _METHOD_LEVELS.items():
        if method_level >= level and method_name != "exception":  # exception calls error
            methods[method_name] = _level_method(_LEVEL_ALIASES.get(method_name, method_name))
    if "info" in methods:
        methods["msg"] = methods["info"]
    base = structlog.make_filtering_bound_logger(level)
    return type(f"RuntimeBoundLogger{name.title()}", (base,), methods)


#: A filtering bound logger class per lowest level, whose lines go straight to the sink.
_WRAPPERS: Final = {level: _wrapper(name, level) for name, level in _LEVELS.items()}


# --------------------------------------------------------------------------- the log


def _level(name: str) -> int:
    name = _LEVEL_ALIASES.get(name.lower(), name.lower())
    try:
        return _LEVELS[name]
    except KeyError:
        raise ValueError(
            f"unknown log level {name!r}; expected one of {', '.join(_LEVELS)}"
        ) from None


#: Agent types whose logger :meth:`RuntimeLog.for_type` keeps.
_MAX_TYPE_LOGGERS: Final = 256

_SESSION_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]")


def _file_name(session_id: str) -> str:
    """A file name for ``session_id`` that cannot leave the logs folder."""
    safe = _SESSION_UNSAFE.sub("_", session_id).lstrip(".") or "session"
    return safe + LOG_FILE_SUFFIX


@final
class RuntimeLog:
    """The log of one session: a JSON-lines file and stderr, and the loggers that write them.

    Use it as a context manager (or call :meth:`close`) so the file is closed
    when the runtime closes; lines logged afterwards go to stderr only.
    """

    def __init__(
        self,
        *,
        path: Path | None,
        file_level: str = "info",
        stderr_level: str = "warning",
        stderr: TextIO | None = None,
        env: Mapping[str, str] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> None:
        file_no = _level(file_level)
        stderr_no = _level(stderr_level)
        self._sink = _Sink(
            path=path,
            file_level=file_no,
            stderr_level=stderr_no,
            stderr=stderr,
            finish=_Finish(os.environ if env is None else env),
        )
        lowest = min(stderr_no, file_no) if path is not None else stderr_no
        self._wrapper = _WRAPPERS[lowest]
        self._lowest = lowest
        self._context = dict(context or {})
        self._by_type: dict[str, FilteringBoundLogger] = {}
        # Bound loggers are immutable: every logger is this one bound with more context.
        self._base = cast(
            FilteringBoundLogger,
            structlog.wrap_logger(
                self._sink,
                processors=[],  # _straight_to_sink: the sink finishes each line
                wrapper_class=self._wrapper,
                context_class=dict,
                cache_logger_on_first_use=False,
            ).bind(**self._context),
        )

    def enabled(self, level: str) -> bool:
        """Whether a line at ``level`` is written anywhere (the file or stderr).

        A hot path checks this once, so a line below the configured levels costs a
        comparison instead of a call with its keyword arguments.
        """
        return _level(level) >= self._lowest

    @property
    def path(self) -> Path | None:
        """The log file, or ``None`` when the configuration turned it off."""
        return self._sink.path

    def logger(self, **context: Any) -> FilteringBoundLogger:
        """A logger bound with this session's context and ``context``."""
        return self._base.bind(**context) if context else self._base

    def for_type(self, agent_type: str) -> FilteringBoundLogger:
        """A logger for an agent of ``agent_type`` that has no id yet; bound loggers are
        immutable, so the agents of one type share one (up to ``_MAX_TYPE_LOGGERS`` types)."""
        logger = self._by_type.get(agent_type)
        if logger is None:
            logger = self.logger(agent_type=agent_type)
            if len(self._by_type) < _MAX_TYPE_LOGGERS:
                self._by_type[agent_type] = logger
        return logger

    def for_agent(
        self, *, agent_id: str, nickname: str | None, depth: int, **context: Any
    ) -> FilteringBoundLogger:
        """A logger whose every line names the agent: ``agent_id``, ``nickname``, ``depth``."""
        return self.logger(agent_id=agent_id, nickname=nickname, depth=depth, **context)

    def statistics(self) -> LogStatistics:
        """Lines written to the file and to stderr, and the file's state (the lines held
        for the end of the pass written first)."""
        return self._sink.statistics()

    def batch_with(self, want: Callable[[Any], bool] | None) -> None:
        """Write the file's lines logged in this thread once a pass: ``want(flushable)`` is
        the runtime flusher's (``TranscriptFlusher.want_soon``), which calls the
        flushable's ``flush`` at the end of the pass, or says ``False`` when it will not
        soon (the line is then written at once). ``None``: every line at once again.
        Stderr lines are never held."""
        self._sink.batch_with(want)

    def close(self) -> None:
        """Close the file; later lines go to stderr only. Idempotent."""
        self._sink.close()

    def __enter__(self) -> RuntimeLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_log(
    config: RuntimeConfig,
    session_id: str,
    *,
    stderr: TextIO | None = None,
    env: Mapping[str, str] | None = None,
) -> RuntimeLog:
    """The log of session ``session_id``, as ``config.logging`` says.

    The file is ``<state_dir>/logs/<session_id>.jsonl`` (created, with the
    folder, if needed) unless ``logging.json_file`` is false. ``stderr``
    defaults to the current ``sys.stderr``; ``env`` (default ``os.environ``)
    is where the values of the secret variables to mask are read.
    """
    settings = config.logging
    path = config.logs_dir / _file_name(session_id) if settings.json_file else None
    return RuntimeLog(
        path=path,
        file_level=settings.file_level,
        stderr_level=settings.stderr_level,
        stderr=stderr,
        env=env,
        context={"session_id": session_id},
    )
