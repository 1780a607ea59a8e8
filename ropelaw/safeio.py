"""Reading files a user names, with limits checked before reading (stdlib only).

Every command reads its inputs through :func:`read_regular` (or checks :func:`regular_file`
first): a FIFO would block forever, ``/dev/zero`` (also behind a ``.py`` symlink) never ends, a
socket cannot be read. Such paths are refused before a byte is read, and a regular file is read
up to a size limit, never further. The checks are made on the opened descriptor (``fstat``), so
a path swapped between check and read is still checked.
"""

from __future__ import annotations

import os
import stat

from .errors import UsageError

__all__ = ["NotRegularFile", "file_kind", "regular_file", "read_regular", "open_regular"]


class NotRegularFile(UsageError):
    """A FIFO, device, socket or directory where a file was expected."""


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def file_kind(mode: int) -> str | None:
    """``None`` for a regular file, else what the mode says it is ("a FIFO (named pipe)" ...)."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def regular_file(path: str) -> os.stat_result:
    """``os.stat`` of ``path`` (symlinks followed) or :class:`NotRegularFile` / :class:`UsageError`."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    kind = file_kind(st.st_mode)
    if kind is not None:
        raise NotRegularFile(f"{path}: is {kind}, not a regular file; refused")
    return st


def open_regular(path: str):
    """Open ``path`` for binary reading without blocking on a FIFO; refuse anything not regular.

    ``O_NONBLOCK`` makes ``open`` of a FIFO return at once (it would wait for a writer), then
    ``fstat`` of the descriptor decides. Returns a file object positioned at 0.
    """
    regular_file(path)  # stat first: a socket cannot even be opened, a FIFO open would block
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegularFile(f"{path}: is {kind}, not a regular file; refused")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str, limit: int, what: str = "file") -> bytes:
    """The bytes of regular file ``path``, at most ``limit``; :class:`UsageError` beyond it."""
    with open_regular(path) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise UsageError(f"{path}: larger than {fmt_bytes(limit)}; not a {what}")
    return data


def fmt_bytes(n: int) -> str:
    """``16 MiB``, ``512 KiB``, ``100 bytes``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size:,} {unit}"
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:,} bytes"
