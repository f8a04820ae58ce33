"""The op registry and every op module. Each module lists its public functions in
`__all__` and the Tensor methods it provides in `TENSOR_METHODS`."""

from . import (
    activation,
    binary,
    binary_extra,
    composite,
    composite_extra,
    conv,
    copy,
    creation,
    device_copy,
    einsum,
    fill,
    index,
    index_ops,
    inplace_movement,
    inplace_view,
    join,
    linalg_ops,
    matmul,
    movement,
    pooling,
    random_ops,
    reduce,
    sampling,
    scan,
    softmax,
    sorting,
    sparse_functions,
    special_ops,
    stats,
    ternary,
    unary,
    unary_math,
)

MODULES = (
    activation, binary, binary_extra, composite, conv, copy, creation, einsum, fill, index,
    index_ops, join, linalg_ops, matmul, movement, pooling, random_ops, reduce, sampling, scan,
    softmax, sorting, sparse_functions, stats, ternary, unary, unary_math, inplace_movement,
    composite_extra, special_ops,
)
