"""The op registry and every op module. Each module lists its public functions in
`__all__` and the Tensor methods it provides in `TENSOR_METHODS`."""

from . import (  # (_pair_norms: cdist's members, registered at import as every op's)
    _pair_norms,
    activation,
    bernoulli,
    binary,
    binary_inplace,
    binary_math,
    binomial,
    composite,
    composite_math,
    contractions,
    conv,
    coordinate_grids,
    copy,
    covariance,
    creation,
    device_copy,
    dtype_views,
    einsum,
    empty_permuted,
    extrema,
    fake_quant,
    fake_quant_learnable,
    fill,
    flat_index,
    float_parts,
    foreach,
    from_file,
    function_forms,
    fused_obs_fake_quant,
    hash_tensor,
    histogram,
    index,
    index_ops,
    inplace_movement,
    inplace_view,
    join,
    legacy_constructors,
    legacy_norms,
    linalg_ops,
    logical_bitwise,
    masked_ops,
    matmul,
    movement,
    pooling,
    power,
    python_maps,
    random_ops,
    reduce,
    sampling,
    scan,
    searchsorted,
    segment_reduce,
    setitem,
    shape_helpers,
    softmax,
    sorting,
    sparse_compressed_ops,
    sparse_compressed_pointwise,
    sparse_functions,
    sparse_matmul,
    sparse_mul,
    sparse_pointwise,
    sparse_shape,
    sparse_softmax,
    special_ops,
    splitting,
    stats,
    tensor_meta_methods,
    tensor_predicates,
    ternary,
    unary,
    unary_math,
    view_copies,
    windows,
)

MODULES = (
    activation, binary, power, binary_math, logical_bitwise, binary_inplace, composite, conv, copy,
    creation, legacy_constructors, einsum,
    fill, index, index_ops, masked_ops, flat_index, join, coordinate_grids, linalg_ops, matmul,
    movement, pooling,
    random_ops,
    bernoulli,
    binomial,
    reduce, extrema,
    sampling, scan, setitem, softmax, sorting, sparse_functions, sparse_matmul, sparse_softmax,
    sparse_pointwise, sparse_mul, sparse_shape,
    sparse_compressed_ops, sparse_compressed_pointwise, stats, ternary,
    unary,
    unary_math,
    inplace_movement,
    composite_math, tensor_predicates, shape_helpers, special_ops, dtype_views, contractions,
    float_parts, windows, foreach,
    fake_quant, fake_quant_learnable, fused_obs_fake_quant, view_copies, function_forms,
    legacy_norms, python_maps,
    histogram, searchsorted, covariance, tensor_meta_methods, splitting,
    empty_permuted, segment_reduce, from_file, hash_tensor,
)


# `torch.ops.<ns>`: namespaces of user operators (filled by ember.library), reached as
# attributes of this package, as PyTorch reaches them
_user_namespaces: dict = {}


def __getattr__(name: str):
    """A user-op namespace by name; only those that exist, so submodule imports still find
    their modules."""
    if name in _user_namespaces:
        return _user_namespaces[name]
    if name == "aten":  # (built on first use: its ops are compositions over this package)
        from .._aten import aten

        _user_namespaces.setdefault("aten", aten)
        return aten
    raise AttributeError(f"module 'ember.ops' has no attribute '{name}'")
