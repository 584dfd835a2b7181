"""What the command-line tests share."""

from __future__ import annotations

import subprocess


def rest_of(process: subprocess.Popen[bytes], timeout: float) -> tuple[str, str]:
    """What ``process`` writes after the lines read one by one, and its stderr, once it ends.

    Its pipes must be unbuffered here (``bufsize=0``): the lines read first are then
    taken from the pipe byte by byte, and ``communicate`` reads the pipe itself, so a
    buffered reader would keep what it read ahead of them, and those lines would be
    lost (a ``--json`` line arrived cut in half in a run where rows were fast).
    """
    rest, errors = process.communicate(timeout=timeout)
    return rest.decode(), errors.decode()
