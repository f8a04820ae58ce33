"""DataParallel (one device: runs the module) and DistributedDataParallel on ember.distributed.

DDP keeps one replica per process. At wrap time rank 0's parameters and buffers are copied to
every rank. During backward, each parameter's post-accumulate-grad hook marks it ready; when
every parameter of a bucket (about `bucket_cap_mb` of gradients, in reverse registration
order, the order backward usually produces them) is ready, the bucket's gradients are packed
into one flat array and averaged with a nonblocking all-reduce while backward goes on. The
hook that completes the last bucket waits for all of them and writes the averages back into
`.grad`, so gradients are synchronised when `backward()` returns. Buckets are started in
index order on every rank, as MPI needs collectives issued in the same order everywhere.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .. import _grad_mode as grad_mode
from ..ops.creation import zeros, zeros_like
from .modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Wraps `module` (registered as `module`, so state_dict keys gain a "module." prefix)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class _Bucket:
    """Parameters whose gradients are averaged together in one all-reduce."""

    def __init__(self, params: list) -> None:
        self.params = params
        self.sizes = [p.numel() for p in params]
        with grad_mode.no_grad():
            self.flat = zeros(sum(self.sizes), dtype=params[0].dtype)
        self.pending = len(params)
        self.work = None


def _unreduced_error() -> RuntimeError:
    return RuntimeError(
        "Expected to have finished reduction in the prior iteration before starting a new one. "
        "This error indicates that your module has parameters that were not used in producing "
        "loss. You can enable unused parameter detection by passing the keyword argument "
        "`find_unused_parameters=True` to `DistributedDataParallel`, and by making sure all "
        "`forward` function outputs participate in calculating loss."
    )


class DistributedDataParallel(Module):
    """Data parallelism over the processes of `process_group` (see the module docstring)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None) -> None:
        super().__init__()
        from .. import distributed as dist
        from ..distributed.group import resolve

        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make "
                             "sure to call init_process_group.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = resolve(process_group)
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 2**20)
        self._world = self.process_group.size()
        self._params = [p for p in dict.fromkeys(module.parameters()) if p.requires_grad]
        self._sync_module_states()
        self._buckets = self._make_buckets()
        self._bucket_of = {id(p): (b, i) for b, bk in enumerate(self._buckets)
                           for i, p in enumerate(bk.params)}
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready)
                       for p in self._params]
        self._armed = False  # a synchronised backward is expected
        self._events: list = []  # (what, index) in order: for tests of the overlap
        self._reset()

    # -- setup -----------------------------------------------------------------------

    def _sync_module_states(self) -> None:
        from .. import distributed as dist

        if self._world == 1:
            return
        src = self.process_group.ranks[0]
        with grad_mode.no_grad():
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                dist.broadcast(t.detach(), src, group=self.process_group)

    def _make_buckets(self) -> list[_Bucket]:
        buckets, current, size = [], [], 0
        for p in reversed(self._params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > self.bucket_bytes_cap
                            or p.dtype is not current[0].dtype):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    def _reset(self) -> None:
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._next = 0
        self._ready = 0
        self._started = False
        self._used = None

    # -- forward -----------------------------------------------------------------------

    @contextmanager
    def no_sync(self):
        """Gradients of backward passes inside accumulate locally, without communication."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        from .. import distributed as dist

        if self._armed and self._started:
            raise _unreduced_error()  # a backward began but some gradients never came
        self._reset()
        if self.broadcast_buffers and self._world > 1:
            src = self.process_group.ranks[0]
            with grad_mode.no_grad():
                for buf in self.module.buffers():
                    dist.broadcast(buf.detach(), src, group=self.process_group)
        out = self.module(*inputs, **kwargs)
        self._armed = grad_mode.is_grad_enabled() and self.require_backward_grad_sync
        self._events.clear()
        if self._armed and self.find_unused_parameters:
            self._mark_unused(out)
        return out

    def _mark_unused(self, out) -> None:
        """Parameters the output does not depend on count as ready from the start."""
        reached = set()
        stack = [t.grad_fn for t in _tensors(out) if t.grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                reached.add(id(var))
            stack.extend(n for n, _ in node.next_functions)
        self._used = np.array([id(p) in reached for p in self._params], np.uint8)
        for p, used in zip(self._params, self._used):
            if not used:
                self._mark_ready(p)

    # -- backward ------------------------------------------------------------------------

    def _grad_ready(self, p) -> None:
        if self._armed:
            self._started = True
            self._events.append(("ready", self._bucket_of[id(p)][0]))
            self._mark_ready(p)

    def _mark_ready(self, p) -> None:
        b, _ = self._bucket_of[id(p)]
        self._buckets[b].pending -= 1
        self._ready += 1
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            last = self._ready == len(self._params) and self._next == len(self._buckets) - 1
            self._launch(self._buckets[self._next], last)
            self._events.append(("launch", self._next))
            self._next += 1
        if self._ready == len(self._params):
            self._finish()

    def _launch(self, bucket: _Bucket, last: bool) -> None:
        """Pack the bucket's gradients and start their all-reduce (the last one, waited for at
        once, runs as MPI's blocking call, which has less latency than polling a request)."""
        from .. import distributed as dist

        at = 0
        with grad_mode.no_grad():
            for p, n in zip(bucket.params, bucket.sizes):
                seg = bucket.flat[at:at + n]
                if p.grad is None:
                    seg.zero_()
                else:
                    seg.copy_(p.grad.reshape(-1))
                at += n
        bucket.work = dist.all_reduce(bucket.flat, group=self.process_group,
                                      async_op=not last)

    def _finish(self) -> None:
        """Wait for every bucket and write the averaged gradients into `.grad`."""
        from .. import distributed as dist
        from .._tensor import _wrap

        used_anywhere = None
        if self._used is not None:
            used = _wrap(self._used.copy(), _uint8())
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.process_group)
            used_anywhere = dict(zip(map(id, self._params), used.tolist()))
        with grad_mode.no_grad():
            for bucket in self._buckets:
                if bucket.work is not None:
                    bucket.work.wait()
                bucket.flat.div_(self._world)
                at = 0
                for p, n in zip(bucket.params, bucket.sizes):
                    avg = bucket.flat[at:at + n].view(p.shape)
                    at += n
                    if p.grad is None:
                        if used_anywhere is not None and not used_anywhere[id(p)]:
                            continue
                        p.grad = zeros_like(p)
                    p.grad.copy_(avg)
        self._armed = False
        self._reset()


def _uint8():
    from .. import _dtype

    return _dtype.uint8


def _tensors(out):
    """The tensors in a forward output (nested tuples, lists and dicts)."""
    from .._tensor import Tensor

    if isinstance(out, Tensor):
        yield out
    elif isinstance(out, (list, tuple)):
        for o in out:
            yield from _tensors(o)
    elif isinstance(out, dict):
        for o in out.values():
            yield from _tensors(o)
