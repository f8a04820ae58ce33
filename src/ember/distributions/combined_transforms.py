"""Transforms built from others: over more event dims (Independent), over a reshaped event
(Reshape), and one transform per slice of a dim (Cat, Stack)."""

from __future__ import annotations

from .._tensor import Size, Tensor
from . import constraints
from .independent import sum_rightmost
from .transforms import Transform


class IndependentTransform(Transform):
    """`base_transform` with `reinterpreted_batch_ndims` more rightmost dims read as one
    event: the same map, its log |det J| summed over those dims."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape) -> Size:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape) -> Size:
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """The rightmost `in_shape` dims reshaped to `out_shape` (unit Jacobian)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: Tensor) -> Tensor:
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    def forward_shape(self, shape) -> Size:
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape) -> Size:
        return self._reshaped(shape, self.out_shape, self.in_shape)

    @staticmethod
    def _reshaped(shape, src: Size, dst: Size):
        if len(shape) < len(src):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(src)
        if shape[cut:] != src:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {src}")
        return shape[:cut] + dst


class CatTransform(Transform):
    """`tseq[i]` on the i-th block (of `lengths[i]`) along `dim`, as torch.cat joins them."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check_blocks(self, what: str, v: Tensor, name: str | None = None) -> None:
        """`v` (named `what`; `name` in the out-of-range message, torch's words: "tensor" in
        the maps, the argument's name in log_abs_det_jacobian) has `dim`, of the blocks'
        total length."""
        if not (-v.dim() <= self.dim < v.dim()):
            raise AssertionError(
                f"dim {self.dim} out of range for {name or what} with {v.dim()} dimensions")
        if v.size(self.dim) != self.length:
            raise AssertionError(f"{what}.size({self.dim}) = {v.size(self.dim)} must equal "
                                 f"length {self.length}")

    def _map(self, what: str, v: Tensor, inverse: bool) -> Tensor:
        from ..ops.join import cat

        self._check_blocks(what, v, "tensor")
        out, start = [], 0
        for t, length in zip(self.transforms, self.lengths):
            piece = v.narrow(self.dim, start, length)
            out.append(t.inv(piece) if inverse else t(piece))
            start = start + length
        return cat(out, dim=self.dim)

    def _call(self, x: Tensor) -> Tensor:
        return self._map("x", x, False)

    def _inverse(self, y: Tensor) -> Tensor:
        return self._map("y", y, True)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        from ..ops.join import cat

        self._check_blocks("x", x)
        self._check_blocks("y", y)
        terms, start = [], 0
        for t, length in zip(self.transforms, self.lengths):
            term = t.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                          y.narrow(self.dim, start, length))
            if t.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
            start = start + length
        # the dim inside an event: the blocks' terms are summed, else joined
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        return cat(terms, dim=dim) if dim < 0 else sum(terms)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """`tseq[i]` on the i-th slice along `dim`, as torch.stack joins them."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z: Tensor) -> list:
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, what: str, v: Tensor, name: str = "tensor") -> None:
        if not (-v.dim() <= self.dim < v.dim()):
            raise AssertionError(f"dim {self.dim} out of range for {name} with {v.dim()} "
                                 "dimensions")
        if v.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{what}.size({self.dim}) = {v.size(self.dim)} must equal "
                                 f"len(transforms) {len(self.transforms)}")

    def _call(self, x: Tensor) -> Tensor:
        from ..ops.join import stack

        self._check("x", x)
        return stack([t(v) for v, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        from ..ops.join import stack

        self._check("y", y)
        return stack([t.inv(v) for v, t in zip(self._slice(y), self.transforms)],
                     dim=self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        from ..ops.join import stack

        self._check("x", x, "x")
        self._check("y", y, "y")
        return stack([t.log_abs_det_jacobian(a, b) for a, b, t in
                      zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

