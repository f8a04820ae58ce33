"""DataLoader: batches from a dataset, in this process or in worker processes.

The single-process path fetches and collates in `__next__`. With `num_workers > 0`
each worker process gets batches of indices over its own queue and sends
collated batches back over one shared queue; the main process hands them out in
order, keeps `prefetch_factor` batches per worker in flight, and re-raises a
worker's exception (with its traceback) instead of hanging.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import random
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Generic

import numpy as np

from ... import _dtype as dt
from ... import accelerator
from ..._core.ranges import run_in_range
from ..._user_warnings import user_stacklevel
from ...multiprocessing import reduce_tensor  # noqa: F401 (how a batch crosses the queue)
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, SampleBatch, T_co
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

_POLL_SECONDS = 1.0
# After a worker fault or a timeout the other workers get this long to stop on their own
# (one stuck in the dataset would otherwise hold the error back for the full grace).
_FAULT_GRACE_SECONDS = 0.5


def _died_message(dead) -> str:
    """Why workers ended: PyTorch's 'exited unexpectedly', with each exit code or signal."""
    pids = ", ".join(str(w.pid) for _, w in dead)
    causes = []
    for i, w in dead:
        code = w.exitcode
        if code is not None and code < 0:
            try:
                name = signal.strsignal(-code) or signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            causes.append(f"worker {i} (pid {w.pid}) is killed by signal: {name}.")
        else:
            causes.append(f"worker {i} (pid {w.pid}) exited unexpectedly with exit code {code}.")
    return (f"DataLoader worker (pid(s) {pids}) exited unexpectedly: " + " ".join(causes)
            + " Its own error, if any, was printed by the worker; rerunning with "
            "num_workers=0 raises it in this process.")


# --- worker bookkeeping -----------------------------------------------------------

@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's id, count, seed and dataset copy; None in the main process."""
    return _worker_info


class _ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info, where: str) -> None:
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class KeyErrorMessage(str):
    """Keeps KeyError's message readable (KeyError would repr-quote a plain string)."""

    def __repr__(self) -> str:
        return self


@dataclass(frozen=True)
class _IterableDone:
    worker_id: int


# --- fetching ------------------------------------------------------------------------

class _MapFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self.dataset[i] for i in index]
            if isinstance(data, SampleBatch) and self.collate_fn is not default_collate:
                data = list(data)  # a custom collate_fn sees a plain list of samples
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.iterator))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.iterator)
        return self.collate_fn(data)


def _fetcher(kind_iterable: bool, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if kind_iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_worker(base_seed: int, worker_id: int) -> None:
    """Seed a worker's RNGs as PyTorch does: `random` and ember's with base_seed + id, and
    NumPy's legacy generator with four words a SeedSequence draws from (id, base_seed's
    low and high 32 bits, 0), so workers' NumPy streams are unrelated yet reproducible."""
    from ...random import manual_seed

    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    np.random.seed(np.random.SeedSequence(entropy).generate_state(4))


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers) -> None:
    """Body of a worker process: fetch the batches it is asked for until told to stop."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = _ExceptionWrapper(sys.exc_info(),
                                           f"in DataLoader worker process {worker_id}")
        iteration_over = False
        while True:
            try:
                r = index_queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if r is None:
                break
            idx, index = r
            if isinstance(index, _ResumeIteration):
                fetcher = _fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                iteration_over = False
                continue
            if done_event.is_set() or iteration_over:
                continue
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    data = _IterableDone(worker_id)
                    iteration_over = True
                except Exception:
                    data = _ExceptionWrapper(sys.exc_info(),
                                             f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()


# --- iterators -------------------------------------------------------------------

class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        from ...ops.creation import empty

        self._loader = loader
        self._dataset = loader.dataset
        self._iterable = isinstance(loader.dataset, IterableDataset)
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        if loader.pin_memory and not accelerator.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=user_stacklevel())
        self._sampler_iter = iter(self._index_sampler)
        # PyTorch draws this seed for every epoch, even without workers; drawing it too
        # keeps a seeded program's random stream in step with torch.
        self._base_seed = int(empty((), dtype=dt.int64).random_(
            generator=loader.generator).item())
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def _next_index(self):
        return next(self._sampler_iter)

    def _reset(self, loader) -> None:
        # NOTE: a persistent iterator's next epoch draws no new base seed (its workers keep
        # theirs), so the sampler's shuffle stays in step with torch's generator.
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = _fetcher(self._iterable, self._dataset, self._auto_collation,
                                 self._collate_fn, self._drop_last)

    def __next__(self):
        return run_in_range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                            self._next)

    def _next(self):
        index = self._next_index()
        data = self._fetcher.fetch(index)
        self._num_yielded += 1
        return data


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._ctx = ctx
        self._worker_queue_cycle = itertools.cycle(range(self._num_workers))
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(
                target=_worker_loop,
                args=(self._iterable, self._dataset, iq, self._data_queue, self._done_event,
                      self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, loader.worker_init_fn, i, self._num_workers),
                daemon=True,
            )
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._shutdown = False
        self._start_epoch(first=True)

    def _start_epoch(self, first: bool = False) -> None:
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        if not first:
            # Persistent workers: tell each to start over with its iterable dataset.
            for iq in self._index_queues:
                iq.put((-1, _ResumeIteration()))
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def _reset(self, loader) -> None:
        super()._reset(loader)
        self._start_epoch()

    def _try_put_index(self) -> None:
        if self._tasks_outstanding >= self._prefetch * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_queue_cycle)
            if self._workers_status[wid]:
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get(self):
        """Next (idx, data) from the workers; raises if one died or the timeout passed."""
        waited = 0.0
        while True:
            wait = _POLL_SECONDS if not self._timeout else min(_POLL_SECONDS,
                                                               self._timeout - waited)
            try:
                return self._data_queue.get(timeout=max(wait, 0.01))
            except queue.Empty:
                waited += wait
                dead = [(i, w) for i, w in enumerate(self._workers) if not w.is_alive()]
                if dead:
                    self._shutdown_workers(grace=_FAULT_GRACE_SECONDS)
                    raise RuntimeError(_died_message(dead)) from None
                if self._timeout and waited >= self._timeout:
                    self._shutdown_workers(grace=_FAULT_GRACE_SECONDS)
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds"
                    ) from None

    def __next__(self):
        return run_in_range(
            "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", self._next)

    def _next(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is None:  # a worker that finished its iterable dataset skips ahead
                    self._rcvd_idx += 1
                    continue
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process(data)
            idx, data = self._get()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDone):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process(data)

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, _ExceptionWrapper):
            self._shutdown_workers(grace=_FAULT_GRACE_SECONDS)
            data.reraise()
        self._num_yielded += 1
        return data

    def _shutdown_workers(self, grace: float = 5.0) -> None:
        """Ask the workers to stop; those still running after `grace` seconds (in all) are
        terminated, then killed, and every one is reaped, so no process is left behind."""
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for iq in self._index_queues:
            try:
                iq.put(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + grace
        for w in self._workers:
            w.join(timeout=max(deadline - time.monotonic(), 0.0))
        for w in self._workers:
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
            if w.is_alive():
                w.kill()
                w.join()
        for iq in self._index_queues:
            iq.cancel_join_thread()
            iq.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:
            pass


class _ResumeIteration:
    """Sent to persistent workers at a new epoch (iterable datasets restart)."""


class _InfiniteConstantSampler(Sampler):
    def __iter__(self):
        while True:
            yield None


# --- the loader --------------------------------------------------------------------------

class DataLoader(Generic[T_co]):
    """Iterate a dataset in batches: sampling, batching, collation and worker processes."""

    __initialized = False
    # (fixed once built: the sampler, batching and length were worked out from them)
    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self.__initialized = True
        self.check_worker_number_rationality()

    def __setattr__(self, name: str, value) -> None:
        if self.__initialized and name in self._FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx) -> None:
        """A start method's name or a context, checked (and a name resolved) as torch does."""
        if ctx is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got num_workers=0")
            if isinstance(ctx, str):
                methods = multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={ctx}")
        self._multiprocessing_context = ctx

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def check_worker_number_rationality(self) -> None:
        """Warn (as PyTorch does) when more workers are asked for than this process may use
        CPUs: more would only contend with each other, or starve the machine."""
        if not self.num_workers:
            return
        affinity = hasattr(os, "sched_getaffinity")
        cpus = len(os.sched_getaffinity(0)) if affinity else os.cpu_count()
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is None:
            suggestion = ("DataLoader is not able to compute a suggested max number of worker "
                          "in current system.")
        else:
            suggestion = (f"Our suggested max number of worker in current system is {cpus}"
                          f"{'' if affinity else ' (`cpuset` is not taken into account)'}, "
                          "which is smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {suggestion} Please be aware that excessive worker creation "
                      "might get DataLoader running slow or even freeze, lower the worker "
                      "number to avoid potential slowness/freeze if necessary.",
                      stacklevel=user_stacklevel())

    def _worker_iter(self) -> _MultiProcessingDataLoaderIter:
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if self.persistent_workers:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = self._worker_iter()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._worker_iter()

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __del__(self) -> None:
        it = getattr(self, "_iterator", None)
        if it is not None:
            try:
                it._shutdown_workers()
            except Exception:
                pass

