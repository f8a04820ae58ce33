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
    # NOTE: grad stays on: the function may itself use autograd (gradgradcheck's does).
    return [o.detach()._array().astype(np.float64).reshape(-1).copy()
            for o in _float_outputs(func(*inputs))]


def _numerical(func, inputs, diff_idx, eps: float) -> list:
    """J[i][k] (input i, output k) as a (numel_in, numel_out) float64 array, by differences."""
    jac = []
    for i in diff_idx:
        x = inputs[i]
        arr = x.detach()._array()  # writes here bypass the version counter on purpose
        base = _run(func, inputs)
        cols = [np.zeros((x.numel(), b.size)) for b in base]
        for j, idx in enumerate(np.ndindex(arr.shape)):
            old = arr[idx].copy()
            arr[idx] = old + eps
            up = _run(func, inputs)
            arr[idx] = old - eps
            down = _run(func, inputs)
            arr[idx] = old
            for k, (u, d) in enumerate(zip(up, down)):
                cols[k][j] = (u - d) / (2 * eps)
        jac.append(cols)
    return jac


def _analytical(func, inputs, diff_idx) -> list:
    """The same Jacobians from backward: one `autograd.grad` per output element."""
    from ..ops.creation import tensor
    from .engine import grad

    outs = _float_outputs(func(*inputs))
    jac = [[np.zeros((inputs[i].numel(), o.numel())) for o in outs] for i in diff_idx]
    targets = [inputs[i] for i in diff_idx]
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for e in range(o.numel()):
            onehot = np.zeros(o.numel())
            onehot[e] = 1.0
            seed = tensor(onehot.reshape(tuple(o.shape)), dtype=o.dtype)
            gs = grad(o, targets, seed, retain_graph=True, allow_unused=True)
            for n, g in enumerate(gs):
                if g is not None:
                    if tuple(g.shape) != tuple(targets[n].shape):
                        raise GradcheckError("Gradient has incorrect size")
                    jac[n][k][:, e] = g.detach()._array().astype(np.float64).reshape(-1)
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


def _fmt(a: np.ndarray) -> str:
    from ..ops.creation import tensor

    return repr(tensor(a))


def _check_inputs(inputs) -> list:
    Tensor = _tensor_cls()
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in diff_idx:
        x = inputs[i]
        if x.dtype.is_complex:
            raise NotImplementedError("gradcheck: complex inputs are not supported by ember yet")
        if x.dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning, stacklevel=3)
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
    diff_idx = _check_inputs(inputs)
    if not check_backward_ad:
        return True
    if check_forward_ad:
        numerical = _numerical(func, inputs, diff_idx, eps)
        forward = _forward(func, inputs, diff_idx)
        for n, i in enumerate(diff_idx):
            for k, (a, nu) in enumerate(zip(forward[n], numerical[n])):
                if not np.allclose(a, nu, rtol=rtol, atol=atol):
                    return _fail(
                        f"Jacobian computed with forward mode mismatch for output {k} with "
                        f"respect to input {i},\nnumerical:{_fmt(nu)}\nanalytical:"
                        f"{_fmt(a)}\n", raise_exception)
    if fast_mode:
        return _fast(func, inputs, diff_idx, eps, atol, rtol, raise_exception)
    numerical = _numerical(func, inputs, diff_idx, eps)
    analytical = _analytical(func, inputs, diff_idx)
    for n, i in enumerate(diff_idx):
        for k, (a, nu) in enumerate(zip(analytical[n], numerical[n])):
            if not np.allclose(a, nu, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{_fmt(nu)}\nanalytical:{_fmt(a)}\n", raise_exception)
    again = _analytical(func, inputs, diff_idx)
    for n in range(len(diff_idx)):
        for a, b in zip(analytical[n], again[n]):
            if np.abs(a - b).max(initial=0.0) > nondet_tol:
                return _fail(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}.", raise_exception)
    return True


def _fast(func, inputs, diff_idx, eps, atol, rtol, raise_exception) -> bool:
    """Compare u^T J v for random unit u (per output) and v (per input)."""
    from ..ops.creation import tensor
    from . import grad_mode
    from .engine import grad

    rng = np.random.default_rng(0)
    vs = {i: rng.standard_normal(inputs[i].shape) for i in diff_idx}
    vs = {i: v / max(np.linalg.norm(v), 1e-12) for i, v in vs.items()}
    base = _run(func, inputs)
    us = [rng.standard_normal(b.size) for b in base]
    us = [u / max(np.linalg.norm(u), 1e-12) for u in us]
    for i in diff_idx:
        arr = inputs[i].detach()._array()
        old = arr.copy()
        arr[...] = old + eps * vs[i]
        up = _run(func, inputs)
        arr[...] = old - eps * vs[i]
        down = _run(func, inputs)
        arr[...] = old
        outs = _float_outputs(func(*inputs))
        for k, o in enumerate(outs):
            num = float(((up[k] - down[k]) / (2 * eps)) @ us[k])
            if o.requires_grad:
                u = tensor(us[k].reshape(tuple(o.shape)), dtype=o.dtype)
                g, = grad(o, inputs[i], u, retain_graph=True, allow_unused=True)
                with grad_mode.no_grad():
                    ana = 0.0 if g is None else float(
                        (g.detach()._array().astype(np.float64) * vs[i]).sum())
            else:
                ana = 0.0
            if not np.isclose(ana, num, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{num}\nanalytical:{ana}\n\nThe above quantities relating the "
                    "numerical and analytical jacobians are computed in fast mode.",
                    raise_exception)
    return True


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

    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _diff_outputs(func(*inputs))
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs) for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    Tensor = _tensor_cls()

    def first_order(*args):
        xs, gos = args[:len(args) - n_out], args[len(args) - n_out:]
        outs = _diff_outputs(func(*xs))
        wrt = tuple(x for x in xs if isinstance(x, Tensor) and x.requires_grad)
        gs = grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, fast_mode=fast_mode)


__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]
