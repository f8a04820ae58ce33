"""`torch.library`: add your own operators to ember, as PyTorch programs do.

`custom_op` turns a Python function into an operator (reachable as
`ember.ops.<ns>.<name>`) with a schema read from its type hints; `Library` + `define` +
`impl` declare ops from schema strings; `register_fake`, `register_autograd`,
`register_kernel` and `register_vmap` add what an op needs; `opcheck` tests the
registrations. Everything runs eagerly: ember has no tracing compiler for fake
implementations to serve, so a fake implementation runs for `meta` tensors.
"""

from ._custom_op import CustomOpDef, custom_op
from ._library import (
    Library,
    define,
    fallthrough_kernel,
    impl,
    impl_abstract,
    register_autograd,
    register_fake,
    register_kernel,
    register_vmap,
)
from ._opcheck import OpCheckError, opcheck
from ._registry import OpOverload, OpOverloadPacket
from ._schema import infer_schema

__all__ = [
    "Library", "impl", "define", "fallthrough_kernel", "impl_abstract", "register_fake",
    "register_vmap",
    "custom_op", "register_kernel", "register_autograd", "opcheck", "infer_schema",
    "CustomOpDef", "OpCheckError", "OpOverload", "OpOverloadPacket",
]
