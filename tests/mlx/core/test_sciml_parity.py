"""What examples/mlx/scientific_ml.py's neighbours showed ember's MLX face doing otherwise
than MLX 0.32.4: `linalg.solve`'s batch shapes (MLX permutes b by the LU pivots with a
`take_along_axis` that broadcasts no dimensions in), `eigh`'s `UPLO` (only a leading "L"
means the lower triangle), and `vjp` of a function returning one array twice (the first
place's cotangent counts, the others are dropped). Each case compares ember with MLX
in-process: exception type and message, or the repr (dtype and six significant digits;
the values are small exact sums or 2x2 eigen-problems, equal to the last printed digit)."""

import numpy as np
import pytest

import ember.mlx.core as mx
from mlx_oracle import outcome

mlx = pytest.importorskip("mlx.core")

SETUP = ("A = mx.array([[4.0, 1.0], [1.0, 3.0]]);"
         "N = mx.array([[4.0, 1.0], [2.0, 3.0]]);"
         "B3 = mx.stack([A, 2 * A, A + 1]);"
         "B23 = mx.stack([B3, B3])")


def _same(expr: str) -> None:
    ours, theirs = outcome(expr, mx, SETUP), outcome(expr, mlx, SETUP)
    assert ours == theirs, expr


SOLVE_SHAPES = [(a, b) for a in ("A", "B3", "A[None]", "B23")
                for b in ("(2,)", "(2, 1)", "(2, 3)", "(3, 2, 1)", "(3, 2, 2)", "(1, 2, 2)",
                          "(2, 3, 2, 1)", "(4, 2, 2)")]


@pytest.mark.parametrize("a,b", SOLVE_SHAPES)
def test_solve_batch_shapes_as_mlx(a, b):
    # shapes only for the successes (LAPACK drivers differ), type and message for errors
    _same(f"mx.linalg.solve({a}, mx.ones({b}), stream=mx.cpu).shape")
    _same(f"mx.linalg.solve_triangular({a}, mx.ones({b}), stream=mx.cpu).shape")


def test_solve_broadcast_values():
    # a batch of one b against three matrices: each solved by hand, x = a^-1 b
    x = mx.linalg.solve(mx.stack([mx.eye(2), 2 * mx.eye(2), 4 * mx.eye(2)]),
                        mx.array([[[2.0], [4.0]]]), stream=mx.cpu)
    assert x.shape == (3, 2, 1)
    assert x.tolist() == [[[2.0], [4.0]], [[1.0], [2.0]], [[0.5], [1.0]]]


@pytest.mark.parametrize("uplo", ["'L'", "'U'", "'X'", "'l'", "'u'", "''", "'LU'", "'UL'"])
def test_eigh_reads_the_triangle_mlx_reads(uplo):
    # N is not symmetric: its lower and upper triangles give different eigenvalues
    _same(f"mx.linalg.eigvalsh(N, UPLO={uplo}, stream=mx.cpu)")
    _same(f"mx.linalg.eigh(N, UPLO={uplo}, stream=mx.cpu)[0]")
    _same(f"mx.abs(mx.linalg.eigh(N, UPLO={uplo}, stream=mx.cpu)[1])")


VJP_REPEATS = [
    "mx.vjp(lambda a: [a, a], [A], [A, A])[1]",
    "mx.vjp(lambda a: (lambda b: [b, b])(a * 2), [A], [A, 2 * A])[1]",
    "mx.vjp(lambda a: (lambda b: [b, b])(a * 2), [A], [2 * A, A])[1]",
    "mx.vjp(lambda a: (lambda b: (b, a, b))(a * 2), [A], [A, A, 3 * A])[1]",
    "mx.vjp(lambda a: [a * 2, a * 2], [A], [A, A])[1]",
    "mx.vjp(lambda a: [a, a * 2], [A], [A, A])[1]",
    "mx.vjp(lambda a, c: (lambda b: [b, b, c])(a * c), [A, N], [A, N, A])[1]",
]


@pytest.mark.parametrize("expr", VJP_REPEATS)
def test_vjp_of_a_repeated_output_takes_its_first_cotangent(expr):
    _same(expr)


VAR_DDOF = [
    f"mx.{fn}(mx.arange({n}).astype(mx.{dt}) / 7, ddof={ddof})"
    for fn in ("var", "std") for dt in ("bfloat16", "float16", "float32")
    for n, ddof in ((3, 1), (257, 1), (257, 2), (513, 2), (1025, 1), (2049, 1), (3, 5))
]


@pytest.mark.parametrize("expr", VAR_DDOF)
def test_var_counts_elements_in_the_result_dtype(expr):
    # the count n - ddof is rounded as MLX rounds it (n cast to the dtype first); the sums
    # of squared deviations come out equal to the last printed digit on both sides
    _same(expr)


SHAPELESS = [
    # the factorisations: only Eigh and Eig can say their output shapes
    "mx.linalg.cholesky(s, stream=mx.cpu)", "mx.linalg.inv(s, stream=mx.cpu)",
    "mx.linalg.tri_inv(s, stream=mx.cpu)", "mx.linalg.cholesky_inv(s, stream=mx.cpu)",
    "mx.linalg.qr(s, stream=mx.cpu)[0]", "mx.linalg.svd(s, stream=mx.cpu)[1]",
    "mx.linalg.svd(s, compute_uv=False, stream=mx.cpu)", "mx.linalg.lu(s, stream=mx.cpu)[1]",
    "mx.linalg.lu_factor(s, stream=mx.cpu)[0]", "mx.linalg.pinv(s, stream=mx.cpu)",
    "mx.linalg.norm(s, ord=2, stream=mx.cpu)", "mx.linalg.norm(s, ord='nuc', stream=mx.cpu)",
    "mx.linalg.solve(s, mx.ones(3), stream=mx.cpu)",
    "mx.linalg.solve_triangular(s, mx.ones(3), stream=mx.cpu)",
    "mx.linalg.eigh(s, stream=mx.cpu)[1]", "mx.linalg.eigvals(s, stream=mx.cpu)",
    "mx.linalg.norm(s)",
    # the FFTs, resized (a longer input is sliced first) or not, and the shifts (rolls)
    "mx.fft.fft(x)", "mx.fft.rfft(x, n=4)", "mx.fft.rfft(x, n=8)", "mx.fft.irfft(x, n=4)",
    "mx.fft.irfft(x, n=11)", "mx.fft.fftn(x, s=[2, 8], axes=[0, 1])", "mx.fft.rfft2(x)",
    "mx.fft.fftshift(x)", "mx.fft.ifftshift(x, axes=[1])", "mx.fft.fftshift(mx.ones((1, 4)))",
    "mx.fft.fftshift(x, axes=[])", "x * mx.fft.fftfreq(6)", "mx.fft.fftshift(mx.zeros((0, 3)))",
    "mx.fft.ifftshift(mx.zeros((2, 0)), axes=[1])",
    "mx.grad(lambda z: mx.real(mx.fft.fft(z)).sum())(x)",
    # every draw starts from RandomBits; making a key does not
    "mx.random.normal(x.shape, key=k)", "mx.random.uniform(shape=x.shape)",
    "mx.random.categorical(x, key=k)", "mx.random.split(k)", "x + mx.random.key(3)[0]",
    "mx.random.permutation(4, key=k)",
    # the first refused primitive is named; an error of the trace's own comes first
    "(mx.random.normal((2,), key=k), mx.fft.fft(x))",
    "(mx.fft.fft(x), mx.random.normal((2,), key=k))",
    "(mx.fft.fft(x), mx.random.uniform(shape=(2,), dtype=mx.int32))",
]


@pytest.mark.parametrize("body", SHAPELESS)
def test_shapeless_compile_refuses_what_mlx_refuses(body):
    setup = ("x = mx.ones((4, 6)); k = mx.random.key(0);"
             "s = mx.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.2], [0.5, -0.2, 2.0]])")
    expr = f"mx.compile(lambda x: {body}, shapeless=True)(x)"
    # the successes' values are not compared here (shapes only), the refusals exactly
    show = lambda v: [a.shape for a in v] if isinstance(v, tuple) else v.shape  # noqa: E731
    assert outcome(expr, mx, setup, show) == outcome(expr, mlx, setup, show), body


def test_refused_shapeless_trace_inside_an_except_block():
    # an exception being handled around the call is not the trace's own: still refused
    f = mx.compile(lambda x: mx.fft.fft(x), shapeless=True)
    try:
        raise KeyError("outer")
    except KeyError:
        with pytest.raises(ValueError, match=r"\[Primitive::output_shapes\] FFT cannot"):
            f(mx.ones(4))
    # and the same function compiled without shapeless runs (values by hand: DFT of ones)
    assert mx.compile(lambda x: mx.fft.fft(x))(mx.ones(4)).tolist() == [4, 0, 0, 0]


@pytest.mark.parametrize("body", ["mx.fft.fft(a)", "a + mx.random.normal(a.shape, key=k)",
                                  "a + mx.random.normal(a.shape)", "a * 2"])
def test_shapeless_export_writes_what_compile_refuses(body, tmp_path):
    # MLX's export_function writes such a trace (its refusal comes when the imported
    # function is called: see the report, ember runs it); the key is left as MLX leaves it
    setup = f"mx.random.seed(2); k = mx.random.key(0); P = {str(tmp_path / 'f.mlxfn')!r}"
    expr = (f"(mx.export_function(P, lambda a: {body}, mx.eye(2), shapeless=True),"
            " mx.random.normal((2,)))[1]")
    assert outcome(expr, mx, setup) == outcome(expr, mlx, setup), body


def test_a_refused_trace_is_cached_and_draws_no_more_keys():
    # MLX keeps the refused trace: later calls (any shape of the same ndim) are refused
    # without running the function, so the global key advanced once, as by one draw
    def run(m):
        m.random.seed(3)
        cf = m.compile(lambda a: a + m.random.normal((1,)), shapeless=True)
        for n in (2, 5, 2):
            with pytest.raises(ValueError, match="RandomBits cannot infer"):
                cf(m.ones(n))
        return np.array(m.random.state[0]).tolist()

    assert run(mx) == run(mlx)


COMPOSED = [
    # an outer transform through mx.vjp / mx.jvp: second derivatives of z**3 at 2 (12)
    "mx.grad(lambda y: mx.vjp(lambda z: z ** 3, [y], [mx.array(1.0)])[1][0])(x)",
    "mx.grad(lambda y: mx.vjp(lambda z: z ** 3, [y], [mx.array(1.0)])[0][0])(x)",
    "mx.grad(lambda y: mx.jvp(lambda z: z ** 3, [y], [mx.array(1.0)])[1][0])(x)",
    "mx.jvp(lambda y: mx.vjp(lambda z: z ** 3, [y], [mx.array(1.0)])[1][0], [x], [one])",
    "mx.vmap(mx.grad(lambda y: mx.vjp(lambda z: z ** 3, [y], [one])[1][0]))(v)",
    "mx.grad(mx.grad(lambda y: mx.vjp(lambda z: z ** 4, [y], [one])[1][0]))(x)",
    "mx.value_and_grad(lambda y: mx.vjp(lambda z: z ** 3, [y], [one])[1][0])(x)",
    "mx.grad(lambda w: mx.vjp(lambda z: mx.sin(z * w), [x], [one])[1][0] ** 2)(one / 2)",
    # and onto the cotangents, alone, with the primal, repeated, under vmap and compile
    "mx.grad(lambda c: mx.vjp(lambda z: z ** 3, [x], [c])[1][0])(one)",
    "mx.grad(lambda y: mx.vjp(lambda z: z ** 3, [y], [y * 2])[1][0])(x)",
    "mx.grad(lambda c: mx.vjp(lambda z: (z ** 2, z ** 3), [x], [c, c * 2])[1][0])(one)",
    "mx.grad(lambda c: mx.vjp(lambda z: (lambda b: [b, b])(z ** 2), [x], [c, c * 5])[1][0])(one)",
    "mx.vmap(mx.grad(lambda c: mx.vjp(lambda z: z ** 3, [x], [c])[1][0]))(v)",
    "mx.compile(mx.grad(lambda c: mx.vjp(lambda z: z ** 3, [x], [c])[1][0]))(one)",
    "mx.grad(mx.grad(lambda c: mx.vjp(lambda z: z ** 3, [x], [c * c])[1][0]))(one)",
    "mx.grad(lambda c: mx.vjp(lambda z, u: z * 2, [x, x], [c])[1][1] + c)(one)",
    # through mx.checkpoint and custom functions (their rules rerun the function)
    "mx.grad(mx.grad(mx.checkpoint(lambda z: z ** 4)))(x)",
    "mx.grad(mx.grad(mx.grad(mx.checkpoint(lambda z: z ** 4))))(x)",
    "mx.vjp(mx.grad(mx.checkpoint(lambda z: z ** 4)), [x], [one])",
    "mx.grad(lambda y: mx.grad(mx.checkpoint(lambda z: z ** 4))(y) * y)(x)",
    "mx.grad(mx.grad(mx.checkpoint(lambda a, b: a ** 2 * b), argnums=1))(x, one * 3)",
    "mx.jvp(mx.checkpoint(lambda z: z ** 4), [x], [one])",
    "mx.jvp(lambda y: mx.jvp(mx.checkpoint(lambda z: z ** 4), [y], [one])[1][0], [x], [one])",
    "mx.jvp(cube, [x], [one])", "mx.jvp(cube, [v], [v])", "mx.grad(mx.grad(cube))(x)",
]


@pytest.mark.parametrize("expr", COMPOSED)
def test_transforms_compose_through_vjp_jvp_and_custom_functions(expr):
    # small exact polynomials (12, 48, ...): the reprs match to the last digit
    setup = ("x = mx.array(2.0); one = mx.array(1.0); v = mx.array([1.0, 2.0]);"
             "cube = mx.custom_function(lambda z: z ** 3);"
             "cube.vjp(lambda p, c, o: c * 3 * p ** 2)")
    assert outcome(expr, mx, setup) == outcome(expr, mlx, setup), expr
