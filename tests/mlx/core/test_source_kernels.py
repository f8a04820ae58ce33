"""`mx.fast.metal_kernel` / `cuda_kernel` / `precompiled_cuda_kernel` (ember.mlx.core.
_source_kernels) against MLX 0.32.4's CPU build: a Metal kernel is built and its call
checks its arguments before refusing to run; the CUDA ones are refused once bound."""

import pytest

import ember.mlx.core as mx

mlx = pytest.importorskip("mlx.core")
from mlx_oracle import outcome  # noqa: E402

SETUP = ("F = mx.fast;"
         "k = F.metal_kernel(name='a', input_names=['x', 'w'], output_names=['y'], source='s');"
         "base = dict(inputs=[mx.ones(2), 3], grid=(1, 1, 1), threadgroup=(1, 1, 1),"
         "            output_shapes=[(2,)], output_dtypes=[mx.float32])")


def _callable(v):
    return callable(v)


@pytest.mark.parametrize("expr", [
    "F.metal_kernel(name='a', input_names=['x'], output_names=['y'], source='s')",
    "F.metal_kernel('a', ('x',), ('y',), 's', '', True, False, {})",
    "F.metal_kernel('a', 'x', ['y'], 's')",
    "F.metal_kernel('a', ['x'], ['y'])",
    "F.metal_kernel(name=1, input_names=['x'], output_names=['y'], source='s')",
    "F.metal_kernel('a', [1], ['y'], 's')",
    "F.metal_kernel('a', ['x'], ['y'], 's', ensure_row_contiguous=1)",
    "F.metal_kernel('a', ['x'], ['y'], 's', compile_options=3)",
    "F.metal_kernel('a', [], [], 's')",
    "F.metal_kernel('a', ['x'], ['y'], 's', '', True, False, None, 1)",
    "k(**base)",
    "k(**base, stream=mx.gpu)",
    "k(**{**base, 'grid': [1, 1, 1]})",
    "k(**{**base, 'grid': (1, 1)})",
    "k(**{**base, 'inputs': [mx.ones(2)]})",
    "k(**{**base, 'output_shapes': [(2,), (3,)]})",
    "k(**{**base, 'output_dtypes': []})",
    "k(**{**base, 'inputs': [mx.ones(2), 'a']})",
    "k(**base, template=[('T', 'x')])",
    "k(**base, template=[('T', mx.float16), ('N', 4), ('B', True)])",
    "k()",
    "k([mx.ones(2)], [(2,)], [mx.float32], (1, 1, 1), (1, 1, 1))",
    "k(inputs=[mx.ones(2)], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(2,)])",
    "F.cuda_kernel(name='a', input_names=['x'], output_names=['y'], source='s')",
    "F.cuda_kernel(name=1, input_names=['x'], output_names=['y'], source='s')",
    "F.cuda_kernel('a', ['x'], ['y'], 's', '', True, 4)",
    "F.precompiled_cuda_kernel(name='a', compiled_source=b'', inputs=[], output_shapes=[], "
    "output_dtypes=[], scalars=[], grid=(1, 1, 1), threadgroup=(1, 1, 1))",
    "F.precompiled_cuda_kernel(name='a')",
    "F.precompiled_cuda_kernel('a', b'')",
])
def test_source_kernels_as_mlx(expr):
    assert outcome(expr, mx, SETUP, _callable) == outcome(expr, mlx, SETUP, _callable)


def _kind(v):
    """What a program can print of a function object: its type, name, module and the
    first line of its docstring (the call signature)."""
    return (type(v).__module__, type(v).__name__, callable(v), v.__name__, v.__module__,
            v.__doc__.splitlines()[0])


def test_metal_kernel_is_a_nanobind_function_as_in_mlx():
    expr = "F.metal_kernel(name='a', input_names=['x'], output_names=['y'], source='s')"
    assert outcome(expr, mx, SETUP, _kind) == outcome(expr, mlx, SETUP, _kind)
    assert outcome(expr, mx, SETUP, _kind)[1][:2] == ("nanobind", "nb_func")
