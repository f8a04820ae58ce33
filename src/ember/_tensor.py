"""The Tensor: metadata over a storage, plus autograd slots.

A tensor is `shape`, `stride` (in elements), `storage_offset` and `dtype` laid
over one flat `Storage`. Kernels see it as a strided NumPy array built from that
metadata and cached in `_np`. Everything else a tensor can do (arithmetic,
reductions, views, indexing) is an op in `ember.ops`, bound onto this class as
a method by `ember/_bind.py`; this file holds only what a tensor *is*.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import _aliases, _names
from . import _dtype as dt
from . import _grad_mode as grad_mode
from . import _torch_function as _tf
from ._conversions import Conversions
from ._device import CPU, META, device
from ._layout import CHANNELS_LAST_RANK, is_channels_last
from ._memory import tracker as _memory
from ._storage import Storage
from ._user_warnings import user_stacklevel
from ._view import contiguous_strides, is_contiguous, numel, storage_extent, wrap_dim

_new = object.__new__
_grad_state = grad_mode.state
_NP_TO_DTYPE = {d.np: d for d in dt.ALL}





class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as `ember.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{_names.prefix}.Size({list(self)})"

    def numel(self) -> int:
        return numel(self)

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        return Size(tuple.__add__(tuple(other), self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


class Tensor(Conversions):
    """An n-dimensional strided view over a flat storage, with autograd slots.

    `ember.tensor(data)` and the other creation functions make tensors; calling
    `Tensor(...)` directly is PyTorch's legacy constructor.
    """

    __slots__ = (
        "_storage",  # Storage, or None until first needed for a fresh kernel result
        "_np",  # cached NumPy view (CPU), or None
        "_shape",  # tuple of ints
        "_stride",  # tuple of ints, or None: read it off _np (fresh kernel result)
        "_offset",  # storage offset in elements
        "_dtype",
        "_vc",  # version counter: a one-element list shared by views; None for inference tensors
        "_base",  # the tensor this one is a view of, or None
        "_requires_grad",  # True for leaves that require grad and for every non-leaf
        "_grad_fn",  # the node that made this tensor, or None for leaves
        "_grad",
        "_ag",  # rarely used autograd extras (AutogradMeta) or None
        "__dict__",
        "__weakref__",
    )
    _strided = True  # (False for the sparse layouts, which have no strides)
    # a transform's view of data another level holds (vmap's BatchedTensor): the autograd
    # checks of an in-place write are made on that data, where the write lands
    _is_wrapper = False
    _is_lazy = False  # a value a captured graph has yet to compute (ember.graph.lazy)
    _is_pending = False  # a tensor a captured node will write into (ember.graph.lazy)

    def __new__(cls, *args, **kwargs):
        from .ops.legacy_constructors import legacy_tensor_new

        return legacy_tensor_new(cls, *args, **kwargs)

    # -- metadata -------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._shape)

    def size(self, dim: int | None = None, *, axis: int | None = None):
        if axis is not None:
            dim = _aliases.dim_or_axis("size", dim, axis)
        if dim is None:
            return Size(self._shape)
        return self._shape[_size_dim(dim, len(self._shape), "size")]

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    def numel(self) -> int:
        return numel(self._shape)

    nelement = numel

    @property
    def dtype(self) -> dt.dtype:
        return self._dtype

    @property
    def device(self) -> device:
        s = self._storage
        return CPU if s is None else s.device

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    @property
    def is_mps(self) -> bool:
        return self.device.type == "mps"

    @property
    def is_xpu(self) -> bool:
        return self.device.type == "xpu"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    # Devices and formats ember never holds a tensor on or in (PyTorch's CPU build says the
    # same of its own tensors).
    is_ipu = is_mtia = is_maia = is_vulkan = is_xla = is_mkldnn = \
        is_nested = property(lambda self: False)

    @property
    def layout(self):
        from ._layout import strided

        return strided

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_sparse_csr(self) -> bool:
        return False

    # The sparse accessors, on a strided tensor (the sparse classes override them): PyTorch
    # answers the dims and refuses the rest in its words.
    def sparse_dim(self) -> int:
        return 0

    def dense_dim(self) -> int:
        return len(self._shape)

    def indices(self):
        raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")

    def values(self):
        raise RuntimeError("values expected sparse tensor layout but got Strided")

    def coalesce(self):
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")

    def is_coalesced(self) -> bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got "
                           "Strided")

    @property
    def is_quantized(self) -> bool:
        return False

    def get_device(self) -> int:
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    def stride(self, dim: int | None = None, *, axis: int | None = None):
        if axis is not None:
            dim = _aliases.dim_or_axis("stride", dim, axis)
        s = self._stride
        if s is None:
            s = self._ensure_storage()
        if dim is None:
            return s
        return s[_size_dim(dim, len(self._shape), "stride")]

    def storage_offset(self) -> int:
        return self._offset

    def is_contiguous(self, memory_format=None) -> bool:
        rank = CHANNELS_LAST_RANK.get(getattr(memory_format, "name", ""))
        if rank is not None:
            return is_channels_last(self._shape, self.stride(), rank)
        if self._stride is None:
            return bool(self._np.flags.c_contiguous)
        return is_contiguous(self._shape, self._stride)

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return numel(self._shape) * self._dtype.itemsize

    def untyped_storage(self) -> Storage:
        return self._ensure_storage_obj()

    def storage(self):
        """The whole storage read as this tensor's dtype (PyTorch's legacy TypedStorage,
        with its one-time deprecation warning)."""
        from .storage import typed_storage_of

        return typed_storage_of(self)

    def storage_type(self) -> type:
        """The legacy storage class of this tensor's dtype (`ember.FloatStorage`, ...)."""
        from .storage import legacy_storage_class

        return legacy_storage_class(self.dtype)

    def is_shared(self) -> bool:
        """Whether the storage lives in memory shared across processes."""
        return self._ensure_storage_obj().is_shared()

    def share_memory_(self) -> Tensor:
        """Move the storage into memory that processes forked later share (Hogwild
        training); every view of it follows. The gradient stays where it is."""
        self._ensure_storage_obj().share_memory_()
        return self

    def data_ptr(self) -> int:
        return self._ensure_storage_obj().data_ptr() + self._offset * self._dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def is_signed(self) -> bool:
        return self._dtype.is_signed

    def is_inference(self) -> bool:
        return self._vc is None

    @property
    def _version(self) -> int:
        if self._vc is None:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    def _is_view(self) -> bool:
        return self._base is not None

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __hash__(self) -> int:
        return id(self)

    # -- storage and the NumPy view ------------------------------------------

    def _ensure_storage_obj(self) -> Storage:
        if self._storage is None:
            self._ensure_storage()
        return self._storage

    def _ensure_storage(self) -> tuple[int, ...]:
        """Give a fresh kernel result its Storage and explicit strides; returns the strides."""
        if self._storage is not None:
            return self._stride
        arr = self._np
        itemsize = arr.itemsize
        if arr.flags.c_contiguous:
            flat = arr.reshape(-1)
            stride = contiguous_strides(arr.shape)
        else:
            order = sorted(range(arr.ndim), key=lambda d: -arr.strides[d])
            dense = arr.transpose(order)
            if not dense.flags.c_contiguous or min(arr.strides, default=0) < 0:
                arr = self._np = np.ascontiguousarray(arr)
                flat = arr.reshape(-1)
                stride = contiguous_strides(arr.shape)
            else:
                flat = dense.reshape(-1)
                stride = tuple(s // itemsize for s in arr.strides)
        self._storage = Storage(flat, flat.nbytes, CPU)
        self._stride = stride
        return stride

    def _drop_array_view(self) -> None:
        """Forget the cached NumPy view, so every read of the data comes through `_array`
        (which a lazy module's placeholder overrides to refuse)."""
        self._ensure_storage()
        self._np = None

    def _array(self) -> np.ndarray:
        """The tensor's data as a NumPy view (no copy); RuntimeError on meta."""
        a = self._np
        if a is not None:
            return a
        s = self._storage
        if s.data is None:
            raise RuntimeError(
                f"Tensor on device {s.device} is not on the expected device cpu: meta tensors "
                "have no data"
            )
        dtype = self._dtype.np
        stride = self._stride
        itemsize = dtype.itemsize
        if stride == contiguous_strides(self._shape) and s.data.dtype == dtype:
            n = numel(self._shape)
            a = s.data[self._offset:self._offset + n].reshape(self._shape)
        else:
            # An empty view may sit past the end of its storage; NumPy wants it inside.
            off = self._offset * itemsize if numel(self._shape) else 0
            a = np.ndarray(self._shape, dtype, buffer=s.bytes, offset=off,
                           strides=tuple(x * itemsize for x in stride))
        self._np = a
        return a

    # -- autograd slots ---------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients")
        if value and self._vc is None and not grad_mode.state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad.__class__ is not bool:
            from .ops._arg_parser_text import need_bool

            need_bool(requires_grad, "requires_grad_", "requires_grad", 2, method=True)
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            # NOTE: PyTorch's method words it without "complex" (its setter says both).
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None and self._grad_fn is not None:
            # A view whose base was since written in place gets a fresh node (AsStrided).
            from .autograd.graph import current_grad_fn

            return current_grad_fn(self)
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        ag = self._ag
        return 0 if ag is None else ag.output_nr

    @property
    def grad(self) -> Tensor | None:
        if self._grad_fn is not None and not (self._ag is not None and self._ag.retains_grad):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
                "for more information.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            want = self._dtype
            if self._ag is not None and self._grad_fn is None:
                want = self.grad_dtype
            if want is not None and value._dtype is not want:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{dt.CPP_TYPE_NAMES[value._dtype.name]}' to a tensor with grad_dtype "
                    f"'{dt.SCALAR_TYPE_NAMES[want.name]}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
                    "the tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
                    "gradient may break downstream systems that assume they match.")
            if value.device != self.device:
                raise RuntimeError(
                    "assigned grad has data located on a different device: expected "
                    f"{self.device}, got {value.device}"
                )
            if value._shape != self._shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._shape)}' to a tensor "
                    f"of size '{list(self._shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def grad_dtype(self) -> dt.dtype | None:
        """The dtype a leaf's gradients take (cast on arrival): its own dtype unless set;
        None allows any."""
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        from .autograd.graph import SAME_DTYPE

        want = SAME_DTYPE if self._ag is None else self._ag.grad_dtype
        return self._dtype if want is SAME_DTYPE else want

    @grad_dtype.setter
    def grad_dtype(self, value: dt.dtype | None) -> None:
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, dt.dtype):
            raise RuntimeError(
                f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
        g = self._grad
        if value is not None and g is not None and g._dtype is not value:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{dt.SCALAR_TYPE_NAMES[value.name]}' because there "
                f"is already a gradient with dtype '{dt.CPP_TYPE_NAMES[g._dtype.name]}'. Please "
                "clear the gradient (.grad = None) before changing grad_dtype, or ensure the new "
                "grad_dtype matches the existing gradient's dtype.")
        from .autograd.graph import ag_meta

        ag_meta(self).grad_dtype = value

    @property
    def retains_grad(self) -> bool:
        return self._ag is not None and self._ag.retains_grad

    def retain_grad(self) -> None:
        from .autograd.graph import retain_grad

        retain_grad(self)

    def register_hook(self, hook):
        from .autograd.graph import register_tensor_hook

        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        from .autograd.graph import register_post_accumulate_grad_hook

        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        # (as torch: a gradient that is no tensor is read as a sequence of gradients)
        grads = None if gradient is None else (gradient,) if isinstance(gradient, Tensor) \
            else tuple(gradient)
        _run_backward((self,), grads, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing this one's storage and version counter, outside the graph.
        (Replaced by the `detach` primitive's binding when the ops load.)"""
        return _alias(self)  # not a view, as in PyTorch: it may be written in place freely

    def __init_subclass__(cls, **kwargs) -> None:
        """A subclass defined outside ember turns the override protocol on (by default its
        results convert to it); ember's own subclasses opt out, as `nn.Parameter` does."""
        super().__init_subclass__(**kwargs)
        if "__torch_function__" not in vars(cls) and cls.__module__.startswith("ember."):
            cls.__torch_function__ = _tf._disabled_torch_function_impl
        elif _tf._overrides(cls):
            _tf.activate()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default override: run `func` with subclass dispatch off, then give its Tensor
        results (also inside tuples and lists) this class's type, as `as_subclass` does."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with _tf.DisableTorchFunctionSubclass():
            out = func(*args, **kwargs)
        owner = getattr(func, "__self__", None)
        if any(owner is p for p in _tf.nowrap):
            return out
        return _convert(out, cls)

    @staticmethod
    def _make_subclass(cls, data: Tensor, require_grad: bool = False) -> Tensor:
        """An instance of Tensor subclass `cls` over `data`'s storage and version counter,
        outside `data`'s graph (how `Parameter` and user subclasses wrap a tensor). An
        inference tensor's wrapper is one too (a Parameter made in inference mode), and
        outside inference mode refuses to require grad, as in PyTorch."""
        if require_grad and not (data._dtype.is_floating_point or data._dtype.is_complex):
            raise RuntimeError(  # (in these words: PyTorch's are three, one per path)
                "Only Tensors of floating point and complex dtype can require gradients")
        t = _alias(data, cls=cls)
        if require_grad:
            t.requires_grad_(True)
        return t

    def detach_(self) -> Tensor:
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """This tensor's values as a new leaf with its own version counter (PyTorch's `.data`;
        an inference tensor's is one too, with none)."""
        t = _alias(self)
        if self._vc is not None:
            t._vc = [0]
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        if value._dtype is not self._dtype and self._requires_grad:
            pass  # PyTorch allows it; the grad then has the new dtype
        self._storage = value._ensure_storage_obj()
        self._np = value._np
        self._shape = value._shape
        self._stride = value._stride
        self._offset = value._offset
        self._dtype = value._dtype

    # -- conversions: NumPy, Python numbers, lists, iteration (_conversions.py) ----

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._printing import tensor_repr

        return tensor_repr(self, tensor_contents)

    def __format__(self, spec: str) -> str:
        # PyTorch formats a 0-d tensor as its Python number (f"{t}" == "1.5", f"{t:.2f}").
        if not self._shape and type(self) is Tensor and self.device.type != "meta":
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        from .serialization import _reduce_tensor

        return _reduce_tensor(self)

    def __deepcopy__(self, memo):
        from .ops.creation import deepcopy_tensor

        return deepcopy_tensor(self, memo)

    # Tensors compare elementwise; `__eq__` is bound with the other ops.
    __array_priority__ = 1000


_tf._base[0] = Tensor


def _convert(out, cls: type):
    """`out` with its Tensors as instances of subclass `cls` (aliases, as `as_subclass`)."""
    if isinstance(out, Tensor):
        return out if isinstance(out, cls) else out.as_subclass(cls)
    if isinstance(out, (tuple, list)):
        items = [_convert(o, cls) for o in out]
        make = getattr(type(out), "_make", None)
        return make(items) if make is not None else type(out)(items)
    return out


def layout_strides(t: Tensor) -> tuple[int, ...]:
    """`t`'s element strides, as `_ensure_storage` gives them, without making a Storage for
    a fresh kernel result that is C-contiguous (the usual case: a recording reads many)."""
    if t._stride is not None:
        return t._stride
    if t._np is not None and t._np.flags.c_contiguous:
        return contiguous_strides(t._shape)
    return t._ensure_storage()


def _size_dim(dim: int, ndim: int, name: str) -> int:
    """`dim` wrapped for `size(dim)` / `stride(dim)`, which no dim of a 0-d tensor passes;
    an int as PyTorch's parser reads one (not a bool; an integer tensor's value)."""
    if dim.__class__ is not int:
        from .ops._arg_parser_text import need_int

        dim = need_int(dim, name, "dim", 2, method=True)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def _run_backward(*args, **kwargs):
    """autograd.engine.backward, which replaces this name when it loads."""
    from .autograd.engine import backward

    return backward(*args, **kwargs)


# --- construction helpers (used by every op) ---------------------------------

def _wrap(arr, dtype: dt.dtype | None = None) -> Tensor:
    """A new tensor owning the fresh array `arr` (a kernel's output)."""
    if arr.__class__ is not np.ndarray:
        arr = np.asarray(arr)
    t = _new(Tensor)
    t._np = arr
    t._storage = None
    t._shape = arr.shape
    t._stride = None
    t._offset = 0
    t._dtype = _NP_TO_DTYPE[arr.dtype] if dtype is None else dtype
    t._vc = [0] if _grad_state.inference is False else None
    t._base = None
    t._requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._ag = None
    if _memory.on:  # (a peak is being measured: count the new buffer)
        _memory.add(arr)
    if _buffer_cache_pending and arr.nbytes >= _BUFFER_CACHE_FROM:
        _start_buffer_cache()
    return t


# A program whose ops run no native kernel still makes large arrays: its first result of a
# megabyte or more calls `on_large_result` (set by ember.native: it loads the native
# runtime, whose buffer cache then serves them; native/buffers.py); until then `_wrap`
# pays one test.
_buffer_cache_pending = True
_BUFFER_CACHE_FROM = 1 << 20
on_large_result: list = [None]


def _start_buffer_cache() -> None:
    global _buffer_cache_pending
    _buffer_cache_pending = False
    if on_large_result[0] is not None:
        on_large_result[0]()


_FRESH = object()


def _make(storage: Storage, shape, stride, offset: int, dtype: dt.dtype,
          base: Tensor | None = None, vc=_FRESH) -> Tensor:
    """A tensor laid over an existing storage (a view, or a fresh allocation)."""
    t = _new(Tensor)
    t._np = None
    t._storage = storage
    t._shape = tuple(shape)
    t._stride = tuple(stride)
    t._offset = offset
    t._dtype = dtype
    if vc is _FRESH:
        vc = [0] if _grad_state.inference is False else None
    t._vc = vc
    t._base = base
    t._requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._ag = None
    return t


def _alias(src: Tensor, *, storage: bool = True, cls: type | None = None) -> Tensor:
    """Same storage, metadata and version counter; no graph.

    With `storage=False` (what a graph node keeps of an output it saves) a fresh kernel
    result is shared as its NumPy array, without making the Storage object it does not
    have yet: no one can ask a saved tensor for its storage. `cls` makes an instance of a
    Tensor subclass instead."""
    if src.__class__ is not Tensor and cls is None and src._is_lazy:
        return src._lazy_alias(storage)  # a captured graph's pending value (ember.graph)
    t = _new(Tensor if cls is None else cls)
    t._np = src._np
    t._storage = src._storage
    t._shape = src._shape
    t._stride = src._stride
    t._offset = src._offset
    t._dtype = src._dtype
    t._vc = src._vc
    t._base = None
    t._requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._ag = None
    if src._storage is None and storage:
        # Both must agree on one Storage object once someone asks for it.
        src._ensure_storage()
        t._storage = src._storage
        t._stride = src._stride
    return t


def _meta(shape, dtype: dt.dtype, stride=None) -> Tensor:
    """A tensor on the meta device: metadata and a byte count, no memory."""
    shape = tuple(shape)
    stride = contiguous_strides(shape) if stride is None else tuple(stride)
    nbytes = storage_extent(shape, stride, 0) * dtype.itemsize
    return _make(Storage(None, nbytes, META), shape, stride, 0, dtype)


def _view(src: Tensor, shape, stride, offset: int) -> Tensor:
    """A view of `src` sharing its storage and version counter (no data touched)."""
    storage = src._storage
    if storage is None:
        src._ensure_storage()
        storage = src._storage
    base = src._base if src._base is not None else src
    out = _make(storage, shape, stride, offset, src._dtype, base, src._vc)
    if src._requires_grad and not _grad_state.enabled:
        _no_grad_views[id(out)] = weakref.ref(out, lambda _, k=id(out): _no_grad_views.pop(k, 0))
    return out


# Views made under no_grad of a tensor that requires grad, by id: PyTorch refuses to write
# them in place with grad on (ember.ops.registry.check_inplace asks `made_under_no_grad`).
_no_grad_views: dict = {}


def made_under_no_grad(view: Tensor) -> bool:
    ref = _no_grad_views.get(id(view))
    return ref is not None and ref() is view


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)
