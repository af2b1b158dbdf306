"""The corpus engine: per-clip tasks on a Dask cluster (a local one of processes by default, or
an existing one by its scheduler's address), results taken in clip order through a bounded
window, a progress bar, and a cache of each clip's result keyed by its content and the settings."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._optional import require
from ..errors import JointLimitsError
from . import store

__all__ = ["Engine", "Interrupted", "content_hash"]


class Interrupted(KeyboardInterrupt):
    """A corpus job stopped by an interrupt (SIGINT): ``done`` of ``total`` clips had finished.
    What they wrote stays (whole files only); running the same job again finishes the rest."""

    def __init__(self, done: int, total: int, what: str = "clips", resume: str | None = None):
        super().__init__(f"interrupted after {done} of {total} {what}")
        self.done, self.total, self.what, self.resume = done, total, what, resume


def content_hash(path: str, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _cached(cache: str | None, settings: str, func: Callable[..., Any], path: str, *args: Any) -> tuple[Any, bool]:
    """``func(*args)`` or its result stored under ``cache`` for this file's content and ``settings``
    (runs on a worker; a result is written atomically, so a killed run leaves no partial one), and
    whether a stored entry was there but refused (damaged, foreign, or not plain data: see
    :mod:`.store`), so recomputed. Entries are plain data, never pickles: a planted file runs no code."""
    if cache is None:
        return func(*args), False
    try:
        digest = content_hash(path)
    except OSError:
        return func(*args), False  # the task reports the unreadable file itself
    key = hashlib.sha256(f"{digest}\0{settings}".encode()).hexdigest()
    target = Path(cache) / key[:2] / f"{key}.npz"
    refused = False
    if target.is_file():
        value = store.load(target, key)
        if value is not store.MISSING:
            return value, False
        refused = True  # recompute a damaged or foreign entry, and say so
    result = func(*args)
    try:
        store.dump(result, target, key)
    except store.StoreError:
        pass  # a value the store cannot hold is not cached
    return result, refused


def _end_children() -> None:
    """SIGKILL this process's child processes that are still running (the local cluster's
    workers; Linux's /proc, elsewhere nothing)."""
    me = os.getpid()
    for d in Path("/proc").glob("[0-9]*"):
        try:
            stat = (d / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == me and fields[0] != "Z" and "resource_tracker" not in (d / "cmdline").read_text():
                os.kill(int(d.name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            continue


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class Engine:
    """Where a corpus job runs: ``client`` (a ``dask.distributed.Client``), else a cluster at
    ``scheduler`` (``tcp://HOST:PORT``), else a local cluster of ``workers`` processes (default:
    one per core). Use as a context manager; it closes only what it opened."""

    def __init__(
        self,
        client: Any = None,
        scheduler: str | None = None,
        workers: int | None = None,
        cache: str | os.PathLike | None = None,
        progress: bool | None = None,
    ):
        self._given = client
        self.scheduler = scheduler
        self.workers = workers
        self.cache = None if cache is None else os.fspath(Path(cache).resolve())
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.client: Any = client
        self._stack = contextlib.ExitStack()
        self._cluster: Any = None
        #: cache entries found but refused (damaged, foreign, not plain data) and recomputed
        self.cache_refused = 0
        #: items whose results :meth:`map` has handed out
        self.done = 0
        if workers is not None and workers < 1:
            raise JointLimitsError(f"--workers must be >= 1, got {workers}")

    def __enter__(self) -> Engine:
        if self._given is not None:
            return self
        distributed = require("distributed", "corpus", "corpus runs on Dask")
        if self.scheduler:
            try:
                self.client = self._stack.enter_context(distributed.Client(self.scheduler, timeout="20s"))
            except OSError as e:
                raise JointLimitsError(f"cannot reach the Dask scheduler at {self.scheduler}: {e}") from None
        else:
            n = self.workers or os.cpu_count() or 1
            # the worker processes start with SIGINT ignored (they inherit it): an interrupt is
            # this process's to handle, which shuts them down, so Ctrl-C (sent to the whole
            # process group) prints no traceback of theirs
            with _sigint_ignored():
                cluster = self._stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=n,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=logging.ERROR,
                    )
                )
            self.client = self._stack.enter_context(distributed.Client(cluster))
            self._cluster = cluster
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            # stopped by the user: no graceful hand-over of work that will not be used; what this
            # engine started is shut down within a few seconds
            with contextlib.suppress(Exception):
                self.client.close(timeout=1)
            if self._cluster is not None:
                with contextlib.suppress(Exception):
                    self._cluster.close(timeout=2)
                _end_children()  # a worker that did not leave in time
            self._stack.pop_all()  # closed above, with bounds; closing again would wait unbounded
            return
        self._stack.close()

    def n_workers(self) -> int:
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    #: clips smaller than this (bytes, together) go to a worker as one task, up to BATCH_CLIPS
    BATCH_BYTES = 2 << 20
    BATCH_CLIPS = 32

    def _batches(
        self, n: int, paths: Sequence[str] | None, hosts: Sequence[str | None] | None = None
    ) -> list[list[int]]:
        if paths is None:
            return [[i] for i in range(n)]
        out: list[list[int]] = []
        size = 0
        # at least four batches per worker, so that every worker has work to the end
        most = max(1, min(self.BATCH_CLIPS, n // (4 * self.n_workers())))
        for i, p in enumerate(paths):
            try:
                b = os.path.getsize(p)
            except OSError:
                b = 0
            moved = hosts is not None and i > 0 and hosts[i] != hosts[i - 1]
            if not out or moved or size + b > self.BATCH_BYTES or len(out[-1]) >= most:
                out.append([])
                size = 0
            out[-1].append(i)
            size += b
        return out

    def map(
        self,
        func: Callable[..., Any],
        items: Sequence[Any],
        *args: Any,
        label: str = "clips",
        settings: str | None = None,
        paths: Sequence[str] | None = None,
        window: int | None = None,
        hosts: Sequence[str | None] | None = None,
        ran_on: list[str | None] | None = None,
    ) -> Iterator[Any]:
        """``func(item, *args)`` for each item, yielded in the items' order. Small clips go in
        batches of about ``BATCH_BYTES`` (one task each: the per-task cost of Dask stays small
        against the work); at most ``window`` tasks (default: 4 per worker) are out at once, so
        results waiting for an earlier clip stay few. With ``settings`` and ``paths`` (each item's
        file) results go through the cache, clip by clip. ``hosts`` (a worker address per item,
        or None) asks for each item's task on that worker (another one if it is gone); the
        address of the worker that ran each item is appended to ``ran_on``."""
        from tqdm import tqdm

        win = window or 4 * self.n_workers()
        bar = tqdm(total=len(items), desc=label, unit="clip", disable=not self.progress, leave=False)
        # the shared arguments go with each task (small: options, a fit plan, limits), so a task
        # rerun after its worker died never waits for data that died with it
        shared = list(args)
        batches = self._batches(len(items), paths, hosts)
        cache = self.cache if settings is not None and paths is not None else None
        futures: dict[int, Any] = {}
        nxt = 0
        try:
            for i in range(len(batches)):
                while nxt < len(batches) and nxt - i < win:
                    idx = batches[nxt]
                    where = hosts[idx[0]] if hosts is not None else None
                    place = {"workers": [where], "allow_other_workers": True} if where else {}
                    futures[nxt] = self.client.submit(
                        _batch,
                        cache,
                        settings,
                        func,
                        [paths[k] for k in idx] if paths is not None else [None] * len(idx),
                        [items[k] for k in idx],
                        *shared,
                        pure=False,
                        **place,
                    )
                    nxt += 1
                fut = futures.pop(i)
                host, results, refused = fut.result()
                self.cache_refused += refused
                fut.release()
                if ran_on is not None:
                    ran_on += [host] * len(results)
                for r in results:
                    yield r
                    self.done += 1
                    bar.update(1)
        finally:
            for f in futures.values():
                f.cancel()
            bar.close()


def _worker_address() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None


def _batch(
    cache: str | None, settings: str | None, func: Callable[..., Any], paths: list, items: list, *args: Any
) -> tuple[str | None, list[Any], int]:
    """One task: ``func`` over a few clips (each through the cache when there is one), and the
    address of the worker it ran on."""
    if cache is None:
        return _worker_address(), [func(it, *args) for it in items], 0
    done = [_cached(cache, settings or "", func, p, it, *args) for p, it in zip(paths, items)]
    return _worker_address(), [r for r, _ in done], sum(refused for _, refused in done)
