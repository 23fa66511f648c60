"""The ``git`` processes ctxeval starts: each answers in time, and none outlives ctxeval.

Two faults of real machines shape this module:

* **A git that hangs** (a lock held on a network disk, a blobless clone waiting for the network,
  a wrapper script gone wrong) used to stall a whole evaluation for ever with no row written.
  Every request now has a deadline (:data:`DEFAULT_TIMEOUT`, ``--git-timeout``,
  ``$CTXEVAL_GIT_TIMEOUT``): a short-lived command (``ls-tree``) is run with a timeout; a
  request to a long-lived ``cat-file --batch`` is watched by one thread per repository cache
  (:class:`Deadlines`), which kills the process when its answer is late. Either way the read
  raises :class:`GitTimeout`, a :class:`~ctxeval.errors.RepoError`, and the instances that
  needed it become error rows (``git_timeout``); a repository whose git timed out once is not
  asked again in that run (its next instances fail at once instead of waiting again).
* **A git left behind** when ctxeval is killed (SIGKILL: no handler runs). A ``cat-file`` that
  is idle exits as its pipes close, but a hung one does not read its pipes. The long-lived
  ``cat-file`` processes are started with the kernel's parent-death signal
  (``prctl(PR_SET_PDEATHSIG, SIGKILL)``): set by ``setpriv --pdeathsig KILL`` (util-linux) in
  front of the command where it is installed, else, on Linux, by a ``preexec_fn`` (which makes
  Python fork instead of vfork: ~30 ms per child of a 400 MB process; these processes are few).
  The short-lived commands (``ls-tree``, one per commit read, 1,254 in a 1,250-row run;
  ``clone`` and ``fetch``) are not: ``setpriv``'s extra ``exec`` cost 1 ms of CPU each there,
  8% of the run's. They are killed by their timeout, and by ``subprocess.run`` when ctxeval is
  interrupted; only one that hangs when ctxeval is killed outright outlives it (until its
  timeout would have come, or whatever it waits for does). Elsewhere than Linux there is no
  such signal, and the deadlines still hold.

The parent-death signal follows the *thread* that started the child (``prctl(2)``): a child
started by a thread that ends before the run does is killed with it, and is started again at
the next read (a dead ``cat-file`` already is, see :mod:`ctxeval.truth.repo`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from ..errors import RepoError

#: Seconds a git request may take before it is given up (an answer of ``cat-file``, a whole
#: ``ls-tree``); a blob read from a cold disk or a tree of a large repository takes well under
#: one. ``--fetch`` (clone, fetch) gets :data:`FETCH_FACTOR` times as long.
DEFAULT_TIMEOUT = 60.0
FETCH_FACTOR = 10
#: The environment variable that sets the timeout where no option does.
TIMEOUT_ENV = "CTXEVAL_GIT_TIMEOUT"


class GitTimeout(RepoError):
    """A git process did not answer within the timeout (it was killed)."""

    kind = "git_timeout"


def timeout_from(value: float | None) -> float:
    """The timeout to use: ``value``, else ``$CTXEVAL_GIT_TIMEOUT``, else the default. A value
    that is not a positive number is a ``ValueError``."""
    if value is None:
        env = os.environ.get(TIMEOUT_ENV)
        if not env:
            return DEFAULT_TIMEOUT
        try:
            value = float(env)
        except ValueError:
            raise ValueError(f"${TIMEOUT_ENV} must be a number of seconds, not {env!r}") \
                from None
    if not value > 0:
        raise ValueError(f"the git timeout must be more than 0 seconds, not {value}")
    return float(value)


@cache
def _setpriv() -> tuple[str, ...]:
    """``setpriv --pdeathsig KILL --`` when this machine's setpriv knows the option."""
    tool = shutil.which("setpriv")
    if tool is None or not sys.platform.startswith("linux"):
        return ()
    try:
        ok = subprocess.run([tool, "--pdeathsig", "KILL", "--", "true"], capture_output=True,
                            timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return (tool, "--pdeathsig", "KILL", "--") if ok else ()


@cache
def _prctl() -> Callable[[], None] | None:
    """A ``preexec_fn`` that sets the parent-death signal (Linux), resolved before any fork."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def set_pdeathsig() -> None:
        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the signal was set
            os._exit(1)

    return set_pdeathsig


def popen_long_lived(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """A long-lived git process (``cat-file --batch``) that dies with ctxeval: ``setpriv``
    where there is one, else the ``preexec_fn`` (these processes are few)."""
    wrapper = _setpriv()
    preexec = None if wrapper else _prctl()
    return subprocess.Popen([*wrapper, *argv], preexec_fn=preexec, **kwargs)


def run(argv: list[str], *, timeout: float, what: str, **kwargs: Any
        ) -> subprocess.CompletedProcess[bytes]:
    """A short-lived git command, its output captured; :class:`GitTimeout` when it takes longer
    than ``timeout`` (it is killed). ``what`` names it in the message."""
    try:
        return subprocess.run(argv, capture_output=True, timeout=timeout, check=False, **kwargs)
    except subprocess.TimeoutExpired:
        raise GitTimeout(f"{what}: git did not finish within {timeout:g} s and was stopped "
                         f"(--git-timeout)") from None


class Watch:
    """One request being waited for; :attr:`expired` once the watchdog killed its process."""

    __slots__ = ("deadline", "expired", "proc")

    def __init__(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        self.proc = proc
        self.deadline = deadline
        self.expired = False


class Deadlines:
    """Kills a long-lived git process whose answer is late: one thread per repository cache,
    asleep until the earliest deadline of the requests in flight, and never longer than the
    timeout. Registering a request is a dict insertion under a lock: no thread is started or
    woken per request (a request registered while the thread sleeps has a deadline a whole
    timeout away, and the thread wakes before that)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._cond = threading.Condition()
        self._watches: dict[int, Watch] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    @contextlib.contextmanager
    def watch(self, proc: subprocess.Popen[bytes]) -> Iterator[Watch]:
        """Watch ``proc`` while the caller waits for its answer (extend the deadline with
        :meth:`progress` as parts of a long answer come)."""
        w = Watch(proc, time.monotonic() + self.timeout)
        with self._cond:
            self._watches[id(w)] = w
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._loop, name="ctxeval-git-deadlines",
                                                daemon=True)
                self._thread.start()
        try:
            yield w
        finally:
            with self._cond:
                self._watches.pop(id(w), None)

    def progress(self, w: Watch) -> None:
        """An answer came for a request of a batch: its next answer has its own deadline."""
        w.deadline = time.monotonic() + self.timeout

    def _loop(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                for w in list(self._watches.values()):
                    if not w.expired and w.deadline <= now:
                        w.expired = True
                        with contextlib.suppress(OSError):
                            w.proc.kill()  # the reader sees EOF and raises GitTimeout
                wait = min((w.deadline for w in self._watches.values() if not w.expired),
                           default=now + self.timeout) - now
                self._cond.wait(timeout=min(max(wait, 0.01), self.timeout))

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._closed = False
