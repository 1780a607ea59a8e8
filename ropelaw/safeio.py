"""Reading files a user names, with limits checked before reading, and writing files whole (stdlib only).

Every command reads its inputs through :func:`read_regular` (or checks :func:`regular_file`
first): a FIFO would block forever, ``/dev/zero`` (also behind a ``.py`` symlink) never ends, a
socket cannot be read. Such paths are refused before a byte is read, and a regular file is read
up to a size limit, never further. The checks are made on the opened descriptor (``fstat``), so
a path swapped between check and read is still checked.

Every file ropelaw writes (an edited config, a figure, an experiment's results, a generated table
or page) goes through :func:`write_atomic`: the target is replaced by a complete file or left as
it was, whatever happens (a full disk, a file-size limit, a signal, a concurrent reader).
"""

from __future__ import annotations

import contextlib
import os
import stat

from .errors import UsageError

__all__ = ["NotRegularFile", "file_kind", "regular_file", "read_regular", "open_regular", "walk_files", "Unscanned",
           "write_atomic", "writable_target"]


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
               unscanned: list[Unscanned] | None = None):
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


# -- writing: the one way ropelaw writes a file ---------------------------------------------
# Signals whose default action ends the process: while a temporary file exists, each is turned
# into an exception so that the file is removed, then re-delivered with its default action (the
# exit status stays the signal's). SIGINT raises KeyboardInterrupt already; SIGKILL cannot be
# caught (a temporary file ``.NAME.*.tmp*`` may then stay beside the target, never the target cut).
_FATAL = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGXCPU", "SIGVTALRM", "SIGPROF")


class _Signalled(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _SignalsRaise:
    """Context manager: fatal signals raise :class:`_Signalled` inside (main thread only), and are
    re-delivered with their default action on the way out."""

    def __enter__(self) -> _SignalsRaise:
        import signal
        import threading

        self.old: dict = {}
        self.pending: int | None = None
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in _FATAL:
            num = getattr(signal, name, None)
            if num is not None and signal.getsignal(num) == signal.SIG_DFL:
                self.old[num] = signal.signal(num, self._handler)
        return self

    def _handler(self, signum: int, frame) -> None:
        if self.pending is None:  # a second signal during the clean-up is held, not raised
            self.pending = signum
            raise _Signalled(signum)

    def __exit__(self, *exc) -> None:
        import signal

        for num, old in self.old.items():
            signal.signal(num, old)
        if self.pending is not None:
            os.kill(os.getpid(), self.pending)  # default action now: the process ends as signalled
            raise SystemExit(128 + self.pending)  # only if the signal is blocked

    def held(self):
        """Context manager: the fatal signals and SIGINT held back (delivered on exit), so that the
        temporary file exists and has a name before any of them can act."""
        import contextlib
        import signal

        if not self.old or not hasattr(signal, "pthread_sigmask"):
            return contextlib.nullcontext()
        nums = set(self.old) | {signal.SIGINT}

        @contextlib.contextmanager
        def masked():
            old = signal.pthread_sigmask(signal.SIG_BLOCK, nums)
            try:
                yield
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return masked()


def writable_target(path: str) -> str:
    """The path a write to ``path`` replaces (a symbolic link is followed and kept), after the checks
    made before anything is opened: an existing non-regular file (FIFO, device, socket, directory)
    is :class:`NotRegularFile`, a missing or non-directory parent :class:`UsageError` (exit 2)."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}; nothing written") from None
    if st is not None:
        kind = file_kind(st.st_mode)
        if kind is not None:
            raise NotRegularFile(f"{path}: is {kind}, not a regular file; refused, nothing written")
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise UsageError(f"{path}: cannot write: no such directory {folder}; nothing written")
    return real


def write_atomic(path: str, content) -> None:
    """Create or replace ``path`` with a complete file, or leave it as it was: the one way ropelaw
    writes a file (configs, figures, experiment results, generated tables).

    ``content``: ``str`` (written as UTF-8, newlines as given), ``bytes``, or a callable ``write(tmp)``
    that writes the temporary file by name (same suffix, so writers that go by it, such as
    matplotlib's ``savefig``, pick the format). Steps: :func:`writable_target` refuses a FIFO, device
    or directory before anything is opened; the temporary file is made in the target's folder, written,
    ``fsync``-ed, given the old file's permissions (or the umask's), and renamed over the target
    (``os.replace``: atomic on POSIX, so a concurrent reader sees the old file or the new, never a
    part), then the folder is ``fsync``-ed. On a full disk, a file-size limit or any other error the
    temporary file is removed, the target is untouched and :class:`UsageError` says so; on a signal
    (SIGINT, SIGTERM, SIGHUP ...) it is removed before the process ends.
    """
    import tempfile

    real = writable_target(path)
    folder, name = os.path.split(real)
    existed = os.path.exists(real)
    with _SignalsRaise() as signals:
        tmp = None
        try:
            with signals.held():
                fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=f".tmp{os.path.splitext(name)[1]}", dir=folder)
            _fill(fd, tmp, content)
            os.chmod(tmp, os.stat(real).st_mode & 0o7777 if existed else 0o666 & ~_umask())
            os.replace(tmp, real)
            tmp = None
        except OSError as exc:
            raise UsageError(f"{path}: cannot write: {exc.strerror or exc}; "
                             + ("the existing file is unchanged" if existed else "nothing written")) from None
        finally:
            if tmp is not None:
                _remove(tmp)
    _fsync_dir(folder)


def _fill(fd: int, tmp: str, content) -> None:
    """Write ``content`` into the temporary file (open as ``fd``) and ``fsync`` it; closes ``fd``."""
    try:
        if callable(content):
            os.close(fd)
            fd = -1
            content(tmp)
            fd = os.open(tmp, os.O_RDONLY)
        else:
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        if fd >= 0:
            os.close(fd)


def _fsync_dir(folder: str) -> None:
    """Make the rename durable (POSIX: the directory entry is the folder's data); best effort."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
