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

__all__ = ["NotRegularFile", "file_kind", "regular_file", "read_regular", "open_regular", "walk_files", "Unscanned",
           "write_atomic"]


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


class Unscanned(tuple):
    """``(path, why)`` of a directory a scan could not enter (unreadable, too long a path, a
    symbolic link not followed): reported by the commands, never skipped in silence."""

    __slots__ = ()

    @property
    def path(self) -> str:
        return self[0]

    @property
    def why(self) -> str:
        return self[1]


def walk_files(root: str, suffixes: tuple[str, ...], skip_dirs=lambda name: False,
               unscanned: "list[Unscanned] | None" = None):
    """Files under directory ``root`` whose lower-cased name ends with one of ``suffixes``, in
    sorted order, depth first; iterative (a tree nested 1,100 deep made ``os.walk`` raise
    RecursionError) and lazy (one directory listing in memory per level).

    Directories ``skip_dirs(name)`` says to skip are not entered. A directory that cannot be
    listed (permissions, a path over PATH_MAX, an I/O error) or a symbolic link to a directory
    (not followed: it may point outside the tree or back into it) is appended to ``unscanned``
    with the reason, where ``os.walk`` left it out without a word. Files are yielded whatever
    their kind (a FIFO named ``x.json`` is refused by the reader, which says so).
    """
    stack: list[list[str]] = []  # per level: the subdirectories still to visit, reversed

    def listing(path: str) -> list[str] | None:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if unscanned is not None:
                why = exc.strerror or str(exc)
                if exc.errno == getattr(__import__("errno"), "ENAMETOOLONG", -1):
                    why = f"its path is longer than the system allows ({len(os.fsencode(path)):,} bytes)"
                unscanned.append(Unscanned((path, f"cannot list the directory: {why}")))
            return None
        subdirs = []
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=False)
                if not is_dir and e.is_symlink() and e.is_dir():
                    if unscanned is not None:
                        unscanned.append(Unscanned((e.path, "a symbolic link to a directory, not followed "
                                                             "(pass its target to scan it)")))
                    continue
            except OSError as exc:
                if unscanned is not None:
                    unscanned.append(Unscanned((e.path, f"cannot stat: {exc.strerror or exc}")))
                continue
            if is_dir:
                if not skip_dirs(e.name):
                    subdirs.append(e.path)
            elif e.name.lower().endswith(suffixes):
                files.append(e.path)
        return subdirs

    files: list[str] = []
    subdirs = listing(root)
    yield from files
    files.clear()
    if subdirs:
        stack.append(subdirs[::-1])
    while stack:
        top = stack[-1]
        if not top:
            stack.pop()
            continue
        path = top.pop()
        subdirs = listing(path)
        yield from files
        files.clear()
        if subdirs:
            stack.append(subdirs[::-1])


def write_atomic(path: str, write) -> None:
    """Create or replace ``path`` only with a complete file: ``write(tmp)`` writes a temporary file
    in the same directory (same suffix, so writers that go by it, such as matplotlib, pick the
    format), which is then renamed over ``path`` (``os.replace``: atomic on POSIX). On a full disk
    or any write error the temporary file is removed and ``path`` is left as it was (a figure used
    to be replaced by a partial one); :class:`UsageError` says why."""
    import tempfile

    folder, name = os.path.split(os.path.abspath(path))
    suffix = os.path.splitext(name)[1]
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=f".tmp{suffix}", dir=folder)
    os.close(fd)
    try:
        write(tmp)
        mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}; "
                         f"{'the existing file is unchanged' if os.path.exists(path) else 'nothing written'}") from None
    except BaseException:
        _remove(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
