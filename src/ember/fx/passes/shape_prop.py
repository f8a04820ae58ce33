"""`ShapeProp`: run a GraphModule on example inputs and record on each node what it
produced (`node.meta['tensor_meta']`: shape, dtype, strides, ...; `node.meta['type']`)."""

from __future__ import annotations

import traceback
from typing import Any, NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records about a tensor a node produced."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _extract_tensor_metadata(result: Tensor, include_contiguity: bool = True
                             ) -> TensorMetadata:
    import ember

    memory_format = None
    if include_contiguity:
        for fmt in (ember.contiguous_format, ember.channels_last, ember.channels_last_3d):
            try:
                if result.is_contiguous(memory_format=fmt):
                    memory_format = fmt
                    break
            except RuntimeError:
                continue  # (channels_last of a tensor that is not 4-d)
    return TensorMetadata(result.shape, result.dtype, result.requires_grad,
                          tuple(result.stride()), memory_format, False, {})


class ShapeProp(Interpreter):
    """`ShapeProp(gm).propagate(*example_inputs)` runs `gm` and annotates its nodes."""

    def __init__(self, gm, fake_mode: Any = None) -> None:
        super().__init__(gm)
        self.fake_mode = fake_mode
        self.real_module = self.module

    def run_node(self, n: Node) -> Any:
        try:
            result = super().run_node(n)
        except Exception as e:
            traceback.print_exc()
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with "
                               f"meta={n.meta}") from e
        found = []

        def extract(obj: Any) -> Any:
            if isinstance(obj, Tensor):
                found.append(True)
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on `args`, recording each node's metadata."""
        return super().run(*args)
