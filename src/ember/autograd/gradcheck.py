"""gradcheck / gradgradcheck: compare backward with central finite differences.

`gradcheck(func, inputs)` builds, for every differentiable input and output, the
Jacobian twice: numerically, by nudging each input element by +-eps, and
analytically, by one backward per output element. They must agree within
`atol + rtol * |numerical|`; backward run twice must agree with itself
(`nondet_tol`). `fast_mode` compares one random projection `u^T J v` instead
of the whole matrix. `gradgradcheck` runs gradcheck on the function
"inputs and grad_outputs -> first-order gradients (create_graph=True)".
Like PyTorch's, both expect float64 inputs for reliable results.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._user_warnings import user_stacklevel


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails (a RuntimeError)."""


def _tensor_cls():
    from .._tensor import Tensor

    return Tensor


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _diff_outputs(out) -> list:
    Tensor = _tensor_cls()
    outs = _as_tuple(out)
    return [o for o in outs if isinstance(o, Tensor) and o.requires_grad]


def _float_outputs(out) -> list:
    Tensor = _tensor_cls()
    return [o for o in _as_tuple(out)
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)]


def _run(func, inputs) -> list:
    """The float outputs of func, flat copies in their own dtype."""
    # NOTE: grad stays on: the function may itself use autograd (gradgradcheck's does).
    return [np.array(o.detach()._array()).reshape(-1) for o in _float_outputs(func(*inputs))]


def _numerical(func, inputs, diff_idx, eps: float, func_out=None) -> list:
    """J[i][k] (input i, output k) as a (numel_in, numel_out) float64 array, by differences.

    `func_out` (the outputs at `inputs`, if already computed) gives the Jacobians' widths, so
    func runs exactly twice per input element, at x - eps then x + eps, as in torch.
    """
    jac = []
    for i in diff_idx:
        x = inputs[i]
        arr = x.detach()._array()  # writes here bypass the version counter on purpose
        base = (_run(func, inputs) if func_out is None else
                [np.empty(o.numel(), dtype=o.detach()._array().dtype)
                 for o in _float_outputs(func_out)])
        # a complex input: the conjugate Wirtinger derivative ds/dx + i ds/dy of each real
        # output, from nudging the real part (x) and the imaginary part (y) in turn
        steps = (1, 1j) if x.dtype.is_complex else (1,)
        cols = [np.zeros((x.numel(), b.size), dtype=np.complex128 if len(steps) == 2
                         else np.float64) for b in base]
        for j, idx in enumerate(np.ndindex(arr.shape)):
            old = arr[idx].copy()
            for direction in steps:
                arr[idx] = old - direction * eps
                down = _run(func, inputs)
                arr[idx] = old + direction * eps
                up = _run(func, inputs)
                arr[idx] = old
                for k, (u, d) in enumerate(zip(up, down)):
                    # NOTE: differenced and divided in the output's dtype, as torch does
                    cols[k][j] += direction * ((u - d) / u.dtype.type(2 * eps))
        jac.append(cols)
    return jac


def _analytical(func_out, inputs, diff_idx) -> list:
    """The same Jacobians from backward: one `autograd.grad` per element of `func_out`.

    NOTE: like torch, every row differentiates the same outputs (retain_graph=True), never a
    fresh call: a function with state (a hook on its output that removes itself, a solver
    that records its iterations) sees what it sees under torch.
    """
    outs = _float_outputs(func_out)
    empty = [[np.zeros((inputs[i].numel(), o.numel()),
                       dtype=np.complex128 if inputs[i].dtype.is_complex else np.float64)
              for o in outs] for i in diff_idx]
    for k, o in enumerate(outs):
        if o.requires_grad:
            for n, rows in enumerate(_analytical_rows(o, inputs, diff_idx)):
                empty[n][k] = rows
    return empty


def _analytical_rows(o, inputs, diff_idx) -> list:
    """For each differentiable input, its Jacobian with output `o` (numel_in, numel_out),
    one `autograd.grad` of `o` per element."""
    from ..ops.creation import tensor
    from .engine import grad

    targets = [inputs[i] for i in diff_idx]
    jac = [np.zeros((x.numel(), o.numel()),
                    dtype=np.complex128 if x.dtype.is_complex else np.float64) for x in targets]
    for e in range(o.numel()):
        onehot = np.zeros(o.numel())
        onehot[e] = 1.0
        seed = tensor(onehot.reshape(tuple(o.shape)), dtype=o.dtype)
        gs = grad(o, targets, seed, retain_graph=True, allow_unused=True)
        for n, g in enumerate(gs):
            if g is not None:
                if tuple(g.shape) != tuple(targets[n].shape):
                    raise GradcheckError("Gradient has incorrect size")
                jac[n][:, e] = g.detach()._array().astype(jac[n].dtype).reshape(-1)
    return jac


def _forward(func, inputs, diff_idx) -> list:
    """The same Jacobians by forward mode: one dual pass per input element."""
    from ..ops.creation import tensor
    from . import forward_ad as fwd

    jac = []
    for i in diff_idx:
        x = inputs[i]
        cols = None
        for j in range(x.numel()):
            onehot = np.zeros(x.numel())
            onehot[j] = 1.0
            with fwd.dual_level():
                args = list(inputs)
                args[i] = fwd.make_dual(x.detach(), tensor(onehot.reshape(tuple(x.shape)),
                                                           dtype=x.dtype))
                outs = _float_outputs(func(*args))
                ts = [fwd.unpack_dual(o).tangent for o in outs]
            if cols is None:
                cols = [np.zeros((x.numel(), o.numel())) for o in outs]
            for k, t in enumerate(ts):
                if t is not None:
                    cols[k][j] = t.detach()._array().astype(np.float64).reshape(-1)
        jac.append(cols or [])
    return jac


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _fmt(a: np.ndarray, dtype=None) -> str:
    """repr of a Jacobian as torch prints it: numerical in the output's dtype, analytical in
    the input's."""
    from ..ops.creation import tensor

    return repr(tensor(a, dtype=dtype))


def _jac_dtypes(func, inputs, diff_idx, func_out=None) -> tuple:
    """({input index: dtype}, [output dtypes]) for the messages."""
    outs = _float_outputs(func(*inputs) if func_out is None else func_out)
    return {i: inputs[i].dtype for i in diff_idx}, [o.dtype for o in outs]


def _check_inputs(inputs, fast_mode: bool, check_forward_ad: bool) -> list:
    Tensor = _tensor_cls()
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i in diff_idx:
        x = inputs[i]
        if x.dtype.is_complex and (fast_mode or check_forward_ad):
            raise NotImplementedError("gradcheck: complex inputs are checked by ember only in "
                                      "backward mode with fast_mode=False")
        if x.dtype.name not in ("float64", "complex128"):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning, stacklevel=user_stacklevel())
    return diff_idx


def gradcheck(func, inputs, *, eps: float = 1e-06, atol: float = 1e-05, rtol: float = 0.001,
              raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True when `func`'s backward matches finite differences at `inputs`.

    On a mismatch raises GradcheckError (a RuntimeError), or returns False when
    `raise_exception=False`.
    """
    inputs = _as_tuple(inputs)
    diff_idx = _check_inputs(inputs, fast_mode, check_forward_ad)
    # NOTE: func runs once here and its outputs are the ones backward differentiates, as in
    # torch (see _analytical)
    func_out = func(*inputs)
    if not _diff_outputs(func_out):
        return _check_constant(func, inputs, diff_idx, eps, nondet_tol, raise_exception)
    if check_backward_ad:
        for part, fn, out in _parts(func, inputs, func_out):
            try:
                if not _check_backward(fn, out(), inputs, diff_idx, eps, atol, rtol,
                                       raise_exception, nondet_tol, fast_mode):
                    return False
            except GradcheckError as e:
                if part is None:
                    raise
                raise GradcheckError(
                    f"While considering the {part} part of complex outputs only, {e}") from None
    if check_forward_ad and not _check_forward(func, inputs, diff_idx, eps, atol, rtol,
                                               raise_exception, fast_mode):
        return False
    if not check_backward_ad:
        return True
    if not _check_mul_by_grad_output(_diff_outputs(func_out), inputs, diff_idx,
                                     raise_exception):
        return False
    if check_undefined_grad:
        return _check_undefined_grad(func, inputs, diff_idx, raise_exception)
    return True


def _check_forward(func, inputs, diff_idx, eps, atol, rtol, raise_exception,
                   fast_mode) -> bool:
    """Forward-mode Jacobians against finite differences."""
    if fast_mode:
        return _fast(func, inputs, diff_idx, eps, atol, rtol, raise_exception, forward=True)
    in_dt, out_dt = _jac_dtypes(func, inputs, diff_idx)
    numerical = _numerical(func, inputs, diff_idx, eps)
    forward = _forward(func, inputs, diff_idx)
    for n, i in enumerate(diff_idx):
        for k, (a, nu) in enumerate(zip(forward[n], numerical[n])):
            if not np.allclose(a, nu, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian computed with forward mode mismatch for output {k} with "
                    f"respect to input {i},\nnumerical:{_fmt(nu, out_dt[k])}\nanalytical:"
                    f"{_fmt(a, out_dt[k])}\n", raise_exception)
    return True


def _check_mul_by_grad_output(outs, inputs, diff_idx, raise_exception) -> bool:
    """Zero output gradients must give zero input gradients of the inputs' dtype and size
    (a backward that ignores its grad_output fails here even when its Jacobian is right)."""
    from ..ops.creation import zeros_like
    from .engine import grad

    targets = [inputs[i] for i in diff_idx]
    # NOTE: no retain_graph, as in torch: the graph of the checked outputs is freed here
    gs = grad(outs, targets, [zeros_like(o) for o in outs], allow_unused=True)
    for g, x in zip(gs, targets):
        if g is None:
            continue
        if not bool((g == 0).all()):
            return _fail("backward not multiplied by grad_output", raise_exception)
        if g.dtype is not x.dtype:
            return _fail("grad is incorrect type", raise_exception)
        if g.device != x.device:
            return _fail("grad is incorrect device", raise_exception)
        if tuple(g.shape) != tuple(x.shape):
            return _fail("grad is incorrect size", raise_exception)
    return True


def _undefined_grad_fn():
    """torch's UndefinedGrad: identity forward; backward passes no gradient (None) on."""
    from .function import Function

    class UndefinedGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    return UndefinedGrad.apply


def _check_undefined_grad(func, inputs, diff_idx, raise_exception) -> bool:
    """Backward must cope with output gradients that never arrived (None): all of them at
    once, then (several outputs) one at a time; the inputs' gradients are then None or zero.
    An error that is not a RuntimeError (a TypeError from `None * 2`) propagates, as in
    torch."""
    from ..ops.creation import zeros_like
    from .engine import grad

    undefined = _undefined_grad_fn()
    targets = [inputs[i] for i in diff_idx]
    checks = [[undefined(o) for o in _diff_outputs(func(*inputs))]]
    if len(checks[0]) > 1:
        for k in range(len(checks[0])):
            outs = _diff_outputs(func(*inputs))
            checks.append([undefined(o) if j == k else o for j, o in enumerate(outs)])
    bc_note = ("Backwards compatibility: New undefined gradient support checking feature is "
               "enabled by default, but it may break existing callers of this function. If "
               "this is true for you, you can call this function with "
               '"check_undefined_grad=False" to disable the feature')
    for outs in checks:
        try:
            gs = grad(outs, targets, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warnings.warn(bc_note, UserWarning, stacklevel=user_stacklevel())
            if not raise_exception:
                return False
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        if any(g is not None and not bool((g == 0).all()) for g in gs):
            warnings.warn(bc_note, UserWarning, stacklevel=user_stacklevel())
            return _fail(
                "Expected all input grads to be undefined or zero when all output grads are "
                'undefined or zero. Please look at "Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"', raise_exception)
    return True


def _parts(func, inputs, func_out) -> list:
    """[(None, func, outputs)], or for complex outputs torch's two checks: the imaginary
    parts, then the real parts (each a real function whose backward is checked like any
    other). The outputs come as a thunk: a part's function runs when its check starts."""
    if not any(o.dtype.is_complex for o in _float_outputs(func_out)):
        return [(None, func, lambda: func_out)]

    def part_fn(take):
        def fn(*args):
            out = func(*args)
            outs = tuple(take(o) if isinstance(o, _tensor_cls()) and o.dtype.is_complex else o
                         for o in _as_tuple(out))
            return outs if isinstance(out, (tuple, list)) else outs[0]
        return fn

    parts = [("imaginary", part_fn(lambda o: o.imag)), ("real", part_fn(lambda o: o.real))]
    return [(name, fn, lambda fn=fn: fn(*inputs)) for name, fn in parts]


def _check_constant(func, inputs, diff_idx, eps, nondet_tol, raise_exception) -> bool:
    """With no output that requires grad, the function must not change with its inputs."""
    for per_input in _numerical(func, inputs, diff_idx, eps):
        for jac in per_input:
            if np.abs(jac).max(initial=0.0) > nondet_tol:
                return _fail("Numerical gradient for function expected to be zero",
                             raise_exception)
    return True


def _check_backward(func, func_out, inputs, diff_idx, eps, atol, rtol, raise_exception,
                    nondet_tol, fast_mode) -> bool:
    """Backward of `func_out` against finite differences, then against itself (reentrance)."""
    if fast_mode:
        return _fast(func, inputs, diff_idx, eps, atol, rtol, raise_exception,
                     func_out=func_out)
    in_dt, out_dt = _jac_dtypes(func, inputs, diff_idx, func_out)
    numerical = _numerical(func, inputs, diff_idx, eps, func_out)
    outs = _float_outputs(func_out)
    # NOTE: torch's order, which a function with state can see: per differentiable output,
    # its Jacobian rows by backward twice (the reentrance check first), then the comparison
    # with the differences; "output" and "input" count the differentiable ones
    for n_out, k in enumerate(k for k, o in enumerate(outs) if o.requires_grad):
        rows = _analytical_rows(outs[k], inputs, diff_idx)
        again = _analytical_rows(outs[k], inputs, diff_idx)
        for a, b in zip(rows, again):
            if np.abs(a - b).max(initial=0.0) > nondet_tol:
                return _fail(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}." + _NONDET_NOTE, raise_exception)
        for n, i in enumerate(diff_idx):
            a, nu = rows[n], numerical[n][k]
            if not np.allclose(a, nu, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian mismatch for output {n_out} with respect to input {n},\n"
                    f"numerical:{_fmt(nu, in_dt[i] if in_dt[i].is_complex else out_dt[k])}"
                    f"\nanalytical:{_fmt(a, in_dt[i])}\n",
                    raise_exception)
    return True


_NONDET_NOTE = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _unit_rand(n: int, dtype, gen) -> np.ndarray:
    """A random unit vector of n entries, drawn as torch's fast gradcheck draws it."""
    from ..ops.random_ops import rand

    v = rand(n, generator=gen).to(dtype)
    return (v / v.norm())._array().copy()


def _fast(func, inputs, diff_idx, eps, atol, rtol, raise_exception,
          forward: bool = False, func_out=None) -> bool:
    """Compare v^T J u (or J u with forward mode) for random unit u per input and v per
    output, with torch's vectors: a fresh default-seeded Generator, uniform draws, inputs
    first, so the numbers in a failure message are torch's and the user's RNG is untouched.
    """
    from ..ops.creation import tensor
    from ..random import Generator
    from .engine import grad

    gen = Generator()
    us = {i: _unit_rand(inputs[i].numel(), inputs[i].dtype, gen) for i in diff_idx}
    outs = _diff_outputs(func(*inputs) if func_out is None else func_out)
    vs = None if forward else [_unit_rand(o.numel(), o.dtype, gen) for o in outs]
    for i in diff_idx:
        arr = inputs[i].detach()._array()  # writes here bypass the version counter on purpose
        old = arr.copy()
        u = us[i].reshape(arr.shape)
        arr[...] = old - u * eps
        down = _run(func, inputs)
        arr[...] = old + u * eps
        up = _run(func, inputs)
        arr[...] = old
        ju = [(b - a) / b.dtype.type(2 * eps) for a, b in zip(down, up)]
        if forward:
            ana = _forward_along(func, inputs, i, us[i])
            pairs = [(a, n, atol * float(us[i].sum())) for a, n in zip(ana, ju)]
        else:
            pairs = []
            for k, (o, v) in enumerate(zip(outs, vs)):
                gv = tensor(v.reshape(tuple(o.shape)), dtype=o.dtype)
                (g,) = grad(o, inputs[i], gv, retain_graph=True, allow_unused=True)
                vj = np.zeros(us[i].shape) if g is None else g.detach()._array().reshape(-1)
                pairs.append((float((vj * us[i]).sum()), float((v * ju[k]).sum()),
                              atol * float(us[i].sum()) * float(v.sum())))
        for k, (a, n, tol) in enumerate(pairs):
            if not np.allclose(a, n, rtol=rtol, atol=tol):
                mode = "computed with forward mode " if forward else ""
                msg = (f"Jacobian {mode}mismatch for output {k} with respect to input {i},\n"
                       f"numerical:{_fmt_fast(n, inputs[i].dtype)}\n"
                       f"analytical:{_fmt_fast(a, inputs[i].dtype)}\n")
                return _fail(msg + _slow_report(func, inputs, diff_idx, i, k, eps, atol, rtol,
                                                forward), raise_exception)
    return True


def _fmt_fast(x, dtype) -> str:
    """A fast-mode quantity as torch prints it: a float, or a tensor for forward mode."""
    return repr(x) if isinstance(x, float) else _fmt(x, dtype)


def _forward_along(func, inputs, i: int, u: np.ndarray) -> list:
    """J u for input i by one forward-mode pass."""
    from ..ops.creation import tensor
    from . import forward_ad as fwd

    x = inputs[i]
    with fwd.dual_level():
        args = list(inputs)
        args[i] = fwd.make_dual(x.detach(), tensor(u.reshape(tuple(x.shape)), dtype=x.dtype))
        ts = [fwd.unpack_dual(o).tangent for o in _float_outputs(func(*args))]
    return [np.zeros(o.numel()) if t is None else np.array(t.detach()._array()).reshape(-1)
            for o, t in zip(_float_outputs(func(*inputs)), ts)]


def _max_diff(num: np.ndarray, ana: np.ndarray, dtype) -> str:
    """max |num - ana| worked in `dtype` and printed as torch formats a 0-d tensor: a float."""
    from ..ops.creation import tensor

    diff = (tensor(num, dtype=dtype) - tensor(ana, dtype=dtype)).abs()
    return repr(diff.max().item()) if diff.numel() else "nan"


def _slow_report(func, inputs, diff_idx, i, k, eps, atol, rtol, forward) -> str:
    """torch's second half of a fast-mode failure: the full Jacobians of that pair."""
    n = diff_idx.index(i)
    in_dt, out_dt = _jac_dtypes(func, inputs, diff_idx)
    num = _numerical(func, inputs, diff_idx, eps)[n][k]
    ana = (_forward(func, inputs, diff_idx) if forward else
           _analytical(func(*inputs), inputs, diff_idx))[n][k]
    ok = np.allclose(ana, num, rtol=rtol, atol=atol)
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
        "background \nabout fast mode. Below, we recompute numerical and analytical jacobians "
        f"in slow mode:\n\nNumerical:\n {_fmt(num, out_dt[k])}\n"
        f"Analytical:\n{_fmt(ana, out_dt[k] if forward else in_dt[i])}\n\n"
        f"The max per-element difference (slow mode) is: {_max_diff(num, ana, out_dt[k])}.\n")
    if ok:
        msg += (
            "Fast gradcheck failed but element-wise differences are small. This means that "
            "the\ntest might've passed in slow_mode!\n\nIf you are adding a new operator, please "
            "file an issue and then use one of the\nworkarounds. The workaround depends on how "
            "your test invokes gradcheck/gradgradcheck:\n\nIf the test\n- manually invokes "
            "gradcheck/gradgradcheck, then call gradcheck/gradgradcheck\n  with "
            "`fast_mode=False` as a keyword argument.\n- is OpInfo-based (e.g., in "
            "test_ops_gradients.py), then modify the OpInfo for the test\n  to have "
            "`gradcheck_fast_mode=False`\n- is a Module test (e.g., in common_nn.py), then "
            "modify the corresponding\n  module_test entry to have `gradcheck_fast_mode=False`"
        )
    return msg


def _random_grad_output(out, noncontiguous: bool):
    """A cotangent drawn from the global generator, uniform in [-1, 1), as PyTorch's
    `make_tensor` draws it (so the random stream after a gradgradcheck matches)."""
    from .._dtype import float64
    from ..ops.creation import empty
    from ..ops.dtype_views import view_as_real
    from ..ops.join import repeat_interleave

    dtype = out.dtype if out.dtype.is_floating_point or out.dtype.is_complex else float64
    g = empty(tuple(out.shape), dtype=dtype, device=out.device)
    (view_as_real(g) if dtype.is_complex else g).uniform_(-1, 1)
    if noncontiguous and g.numel() > 1:
        g = repeat_interleave(g, 2, dim=-1)[..., ::2]
    return g.requires_grad_()


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-06, atol: float = 1e-05,
                  rtol: float = 0.001, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """gradcheck of the first-order gradients: second derivatives against differences.

    `grad_outputs` defaults to random tensors that themselves require grad.
    """
    from .engine import grad

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _diff_outputs(func(*inputs))
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs) for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    Tensor = _tensor_cls()

    # which arguments require grad, remembered: the forward-mode check passes detached duals
    diff_in = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_go = {i for i, g in enumerate(grad_outputs) if g.requires_grad}

    def first_order(*args):
        xs = tuple(x.requires_grad_() if i in diff_in else x
                   for i, x in enumerate(args[:len(args) - n_out]))
        gos = tuple(g.requires_grad_() if i in diff_go else g
                    for i, g in enumerate(args[len(args) - n_out:]))
        outs = _diff_outputs(func(*xs))
        wrt = tuple(x for i, x in enumerate(xs) if i in diff_in)
        gs = grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)


__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]
