"""ember.autograd.functional: Jacobians, Hessians and their products, built on `grad`.

Each function takes `func` and `inputs` (a tensor or a tuple of them) as in
PyTorch. Inputs are detached copies that require grad (or, with
`create_graph=True`, views that keep the caller's graph), `func` runs under
enable_grad, and the products come from reverse mode: `jvp` and `hvp` use the
double-backward trick (differentiate a VJP with respect to its cotangent).
Gradients that do not depend on an input are zeros, or an error with
`strict=True`. Jacobians are computed row by row; `vectorize=True` takes each
row as torch's batched path does (one backward through every output), and
`strategy="forward-mode"` runs one dual pass per input element.
"""

from __future__ import annotations

from .. import _tensor as T
from . import grad_mode
from .engine import grad as _grad


def _as_tuple(x, arg_name: str, fn_name: str):
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, T.Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(t)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the given {arg_name} has type {type(t)}."
            )
    return is_tuple, xs


def _tuple_post(res, flags):
    """Unwrap tuples the caller did not pass (flags: was-a-tuple per nesting level)."""
    if isinstance(flags, tuple):
        if not flags[1]:
            res = tuple(r[0] for r in res)
        if not flags[0]:
            res = res[0]
    elif not flags:
        res = res[0]
    return res


def _prep(inputs, create_graph: bool, need_graph: bool) -> tuple:
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))  # keeps the caller's graph for higher derivatives
        else:
            out.append(x.detach().requires_grad_(need_graph))
    return tuple(out)


def _post(xs, create_graph: bool):
    if isinstance(xs, tuple):
        return tuple(_post(x, create_graph) for x in xs)
    if xs is None or create_graph:
        return xs
    return xs.detach()


def _check_requires_grad(xs, what: str, strict: bool) -> None:
    """In strict mode, refuse a None or non-differentiable entry; `what` picks torch's text."""
    if not strict:
        return
    for i, x in enumerate(xs):
        if x is None:  # only reachable for grad_inputs
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if x.requires_grad:
            continue
        if what == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if what == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if what == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of "
                "the user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when "
            "running in strict mode."
        )


def _validate_v(v, other, is_tuple: bool) -> None:
    if len(other) != len(v):
        if is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            prefix = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {b.shape} but got {a.shape}."
            )


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """`autograd.grad` that skips outputs not requiring grad and allows unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gos = zip(*pairs)
    return _grad(outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph,
                 allow_unused=True)


def _fill_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    from ..ops.creation import zeros_like

    res = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        "The output of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode."
                    )
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i} in "
                        "the grad_outputs when using the double backward trick to compute "
                        "forward mode gradients. This is not allowed in strict mode."
                    )
                if stage == "double_back":
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode."
                    )
                raise RuntimeError(
                    "The hessian of the user-provided function is independent of entry "
                    f"{i} in the grad_jacobian. This is not allowed in strict mode as it "
                    "prevents from using the double backward trick to replace forward mode AD."
                )
            g = zeros_like(r)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _run(func, inputs):
    with grad_mode.enable_grad():
        return func(*inputs)


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with grad_mode.enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        outputs = _run(func, inputs)
        is_out_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _prep(v, create_graph, need_graph=False)
            _validate_v(v, outputs, is_out_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element."
            )
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_zeros(grads, inputs, strict, create_graph, "back")
    return (_tuple_post(_post(outputs, create_graph), is_out_tuple),
            _tuple_post(_post(res, create_graph), is_in_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    from ..ops.creation import zeros_like

    with grad_mode.enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _prep(v, create_graph, need_graph=False)
            _validate_v(v, inputs, is_in_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element."
            )
        outputs = _run(func, inputs)
        is_out_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # u -> J^T u is linear in u; differentiating it with respect to u along v gives J v.
        grad_outputs = tuple(zeros_like(o).requires_grad_(True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        if create_graph:
            with grad_mode.enable_grad():
                grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=True)
        else:
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=False)
        res = _fill_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return (_tuple_post(_post(outputs, create_graph), is_out_tuple),
            _tuple_post(_post(res, create_graph), is_out_tuple))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of `func` at `inputs`: entry [i][j] has shape out_i.shape + in_j.shape."""
    from ..ops.creation import zeros_like

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        # torch checks these in this order, before looking at the inputs
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            # NOTE: torch's message lacks the space in "isonly"; kept so printed text matches.
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
        return _jacfwd(func, inputs)
    with grad_mode.enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prep(inputs, create_graph, need_graph=True)
        outputs = _run(func, inputs)
        is_out_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or `vectorize=False`."
            )
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(flat.numel()):
                if vectorize:
                    gs = _joint_row(outputs, inputs, i, j, create_graph)
                else:
                    gs = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                        create_graph=create_graph)
                for k, (g, x) in enumerate(zip(gs, inputs)):
                    if g is not None and strict and create_graph and not g.requires_grad:
                        # NOTE: torch names the output index i here, not the input index k
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        g = zeros_like(x)
                    rows[k].append(g)
            # an output with no elements has no rows: stack refuses it, as in torch
            per_input = [_stack(rows[k]).view(out.shape + x.shape) for k, x in enumerate(inputs)]
            jac.append(tuple(per_input))
        jac = _post(tuple(jac), create_graph)
    return _tuple_post(jac, (is_out_tuple, is_in_tuple))


def _joint_row(outputs, inputs, i: int, j: int, create_graph: bool) -> tuple:
    """Row j of output i's Jacobian as torch's vectorized path gets it: one backward through
    every output, the cotangent one-hot at that element and zero elsewhere (so with
    create_graph the row depends on whatever any output depends on, as torch's does)."""
    from ..ops.creation import zeros, zeros_like

    gos = []
    for k, o in enumerate(outputs):
        if k != i:
            gos.append(zeros_like(o))
            continue
        hot = zeros(o.numel(), dtype=o.dtype)
        hot[j] = 1
        gos.append(hot.view(o.shape))
    return _autograd_grad(outputs, inputs, tuple(gos), retain_graph=True,
                          create_graph=create_graph)


def _jacfwd(func, inputs):
    """The Jacobian by forward mode: one dual pass per input element, the tangent of that
    element 1 and every other 0 (torch's standard basis, which it runs under vmap)."""
    from ..ops.creation import zeros, zeros_like
    from . import forward_ad as fwd

    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    numels = [x.numel() for x in inputs]
    total = sum(numels)
    rows, primals, is_out_tuple = [], None, False
    for r in range(total):
        with fwd.dual_level():
            duals, start = [], 0
            for x, n in zip(inputs, numels):
                t = zeros(n, dtype=x.dtype)
                if start <= r < start + n:
                    t[r - start] = 1
                duals.append(fwd.make_dual(x, t.view_as(x)))
                start += n
            is_out_tuple, outs = _as_tuple(func(*duals), "outputs of the user-provided "
                                           "function", "jacobian")
            unpacked = [fwd.unpack_dual(o) for o in outs]
            primals = [u.primal for u in unpacked]
            rows.append([zeros_like(u.primal) if u.tangent is None else u.tangent
                         for u in unpacked])
    jac = []
    for i, out in enumerate(primals or []):
        per_out = _stack([row[i] for row in rows])  # (total, *out.shape)
        jac_i = []
        for j, x in zip(per_out.split(numels, dim=0), inputs):
            # the batch dim runs over the input: move it last, then give it the input's shape
            jac_i.append(j.permute(*range(1, j.dim()), 0).reshape(out.shape + x.shape))
        jac.append(jac_i)
    # NOTE: torch's forward-mode path returns lists where its reverse path returns tuples
    return _tuple_post(jac, (is_out_tuple, is_in_tuple))


def _stack(rows: list):
    """Rows stacked along a new first dim."""
    from ..ops.join import stack

    return stack(rows)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar `func`: entry [i][j] has shape in_i.shape + in_j.shape."""
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode".'
        )

    def scalar_func(*inp):
        out = func(*inp)
        is_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_tuple or not isinstance(out, T.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_post(res, (is_in_tuple, is_in_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar `func`."""
    with grad_mode.enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        v = _check_v_inputs(v, inputs, is_in_tuple, create_graph, "vhp")
        outputs = _scalar_output(func, inputs, strict, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return (_tuple_post(_post(outputs, create_graph), False),
            _tuple_post(_post(res, create_graph), is_in_tuple))


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar `func`, by the double-backward trick."""
    from ..ops.creation import zeros_like

    with grad_mode.enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prep(inputs, create_graph, need_graph=True)
        v = _check_v_inputs(v, inputs, is_in_tuple, create_graph, "hvp")
        outputs = _scalar_output(func, inputs, strict, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(x).requires_grad_(True) for x in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return (_tuple_post(_post(outputs, create_graph), False),
            _tuple_post(_post(res, create_graph), is_in_tuple))


def _check_v_inputs(v, inputs, is_in_tuple, create_graph, fn_name):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prep(v, create_graph, need_graph=False)
        _validate_v(v, inputs, is_in_tuple)
    elif len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element."
        )
    return v


def _scalar_output(func, inputs, strict: bool, fn_name: str) -> tuple:
    outputs = _run(func, inputs)
    is_out_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_out_tuple or not isinstance(outputs[0], T.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return outputs


__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]
