"""The LSTM cell as one primitive: nn.LSTM's step after its two matmuls, for the layers whose
PyTorch graph is one node too (float32 with oneDNN on, no projection: MkldnnRnnLayerBackward0).

`lstm_cell(gates, c)` -> (h', c') with gates = x W_ih^T + b_ih + h W_hh^T + b_hh (rows of
i, f, g, o pre-activations). It computes what the composite of `_lstm_step` computes,
kernel for kernel (the same sigmoid / tanh kernels, IEEE products and sums in the same
order), so values and gradients are bit for bit the composite's; it only saves the ~12
op calls and ~12 graph nodes a step costs in Python. nn.LSTM binds it only in plain eager mode (no
interpreter on the stack, no saved-tensor hooks, no autocast: what a transform, a profiler or
a hook sees stays the composite's); its forward-mode and vmap rules serve a VJP or a graph
replayed under a transform.
"""

from __future__ import annotations

import numpy as np

from .. import _grad_mode as grad_mode
from .._core import dispatch
from .._tensor import Tensor, _wrap
from . import activation_backward as ab
from ._batching import batch_size, batched
from .registry import Primitive, bind, defbatch, defjvp, defvjp_joint
from .unary import sigmoid_p, tanh_p


def _arr(t: Tensor) -> np.ndarray:
    return t._np if t._np is not None else t._array()


def _acts(gates: np.ndarray):
    """sigmoid(i), sigmoid(f), tanh(g), sigmoid(o) of the gates' four column blocks (each a
    view of `gates`, as `unsafe_chunk` hands them to the composite's kernels)."""
    n = gates.shape[1] // 4
    sig, tanh = sigmoid_p.kernel, tanh_p.kernel
    return (sig(gates[:, :n]), sig(gates[:, n:2 * n]), tanh(gates[:, 2 * n:3 * n]),
            sig(gates[:, 3 * n:]))


def _lstm_cell_kernel(gates, c):
    si, sf, tg, so = _acts(gates)
    c2 = sf * c + si * tg
    return so * tanh_p.kernel(c2), c2


def _lstm_cell_meta(gates, c):
    return ((c._shape, c._dtype), (c._shape, c._dtype))


lstm_cell_p = Primitive("lstm_cell", _lstm_cell_kernel, _lstm_cell_meta,
                        grad_name="MkldnnRnnLayerBackward0", n_outputs=2)


def _lstm_cell_vjp(g_all, out, gates, c, *, needs):
    """The composite's backward in its own order: h' = so tanh(c') gives d so and d c'
    (added to c''s incoming gradient), c' = sf c + si tg gives the rest; each activation's
    derivative as its VJP computes it (sigmoid_backward, tanh_backward); the four blocks joined
    (zeros for a block that got none, as split's backward fills them)."""
    gh, gc = g_all
    if grad_mode.state.enabled or dispatch._pushed[0]:
        return _lstm_cell_vjp_ops(gh, gc, gates, c, needs)
    si, sf, tg, so = _acts(_arr(gates))
    d_gates, d_c = _backward(si, sf, tg, so, _arr(c), None if gh is None else _arr(gh),
                             None if gc is None else _arr(gc), needs, tanh_p.kernel,
                             np.zeros_like, lambda blocks: np.concatenate(blocks, axis=1),
                             ab.sigmoid_backward_p.kernel, ab.tanh_backward_p.kernel)
    return (None if d_gates is None else _wrap(d_gates)), (None if d_c is None else _wrap(d_c))


def _lstm_cell_vjp_ops(gh, gc, gates, c, needs):
    """The same backward in ember ops: differentiable again under create_graph=True, and seen
    by an interpreter pushed since the forward."""
    from .join import cat

    i, f, g, o = gates.unsafe_chunk(4, -1)
    return _backward(i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid(), c, gh, gc, needs,
                     lambda t: t.tanh(), lambda t: t.new_zeros(t.shape),
                     lambda blocks: cat(blocks, -1),
                     lambda g, s: ab.smooth_grad(ab.sigmoid_backward_p, g, s),
                     lambda g, t: ab.smooth_grad(ab.tanh_backward_p, g, t))


def _backward(si, sf, tg, so, c, gh, gc, needs, tanh, zeros_like, join, sig_grad, tanh_grad):
    """(d gates, d c) from the activations, on arrays or on tensors alike (the operations and
    their order are the composite's; `sig_grad(g, s)` and `tanh_grad(g, t)` its activations'
    derivative kernels, sigmoid_backward and tanh_backward)."""
    dc = go = None
    if gh is not None:
        tc = tanh(sf * c + si * tg)
        go = gh * tc
        dc = tanh_grad(gh * so, tc)
    if gc is not None:
        dc = gc if dc is None else dc + gc
    if dc is None:
        return None, None
    d_gates = d_c = None
    if needs[0]:
        gi = sig_grad(dc * tg, si)
        gf = sig_grad(dc * c, sf)
        gg = tanh_grad(dc * si, tg)
        go = zeros_like(gi) if go is None else sig_grad(go, so)
        d_gates = join((gi, gf, gg, go))
    if needs[1]:
        d_c = dc * sf
    return d_gates, d_c


# The node keeps the gates and the incoming cell state (what the composite's nodes read).
defvjp_joint(lstm_cell_p, _lstm_cell_vjp, (True, True), reads=((0, 1), (0, 1)))


def lstm_cell(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """(h', c') of one LSTM step from its gate pre-activations and cell state."""
    return bind(lstm_cell_p, gates, c)


# --- forward mode and vmap ------------------------------------------------------------------

def _lstm_cell_jvp(primals, tangents, out):
    """The product rule through c' = sf c + si tg and h' = so tanh(c'), each activation's
    derivative at the primal (s (1 - s), 1 - t^2)."""
    gates, c = primals
    t_gates, t_c = tangents
    h2, c2 = out
    i, f, g, o = gates.unsafe_chunk(4, -1)
    si, sf, tg, so = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    dc = None if t_c is None else sf * t_c
    if t_gates is not None:
        ti, tf, tt, to = t_gates.unsafe_chunk(4, -1)
        inner = (sf * (1 - sf)) * tf * c + (si * (1 - si)) * ti * tg + si * ((1 - tg * tg) * tt)
        dc = inner if dc is None else dc + inner
    tc = c2.tanh()
    dh = so * ((1 - tc * tc) * dc)
    if t_gates is not None:
        dh = dh + (so * (1 - so)) * to * tc
    return dh, dc


def _lstm_cell_batch(args, dims):
    """Rows are independent: the batch folds into them (an unbatched operand expanded)."""
    size = batch_size(args, dims)
    gates, c = (batched(a, d, size) for a, d in zip(args, dims))
    rows = gates._shape[1]
    h2, c2 = bind(lstm_cell_p, gates.reshape(size * rows, -1), c.reshape(size * rows, -1))
    return (h2.reshape(size, rows, -1), c2.reshape(size, rows, -1)), (0, 0)


defjvp(lstm_cell_p, _lstm_cell_jvp)
defbatch(lstm_cell_p, _lstm_cell_batch)
