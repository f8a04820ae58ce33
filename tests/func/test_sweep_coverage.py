"""How much of the primitive catalogue the torch.func sweep (`test_sweep_*.py`) reaches: each
case's call is run once under a recording interpreter, and the primitives and family members
it binds (an in-place form counted as its functional primitive; the fused derivative
kernels a gradient inside a call binds included) are counted. The counts are asserted
exactly, so a case lost (or a primitive renamed) is noticed; the ones left out are listed
with the reason."""

from __future__ import annotations

import numpy as np
from tests.func import (
    test_sweep_binary,
    test_sweep_linalg,
    test_sweep_misc,
    test_sweep_nn,
    test_sweep_reduce,
    test_sweep_unary,
    test_sweep_views,
)
from tests.func.sweep import arrays

import ember
from ember._core import Interpreter, interpret
from ember._core.primitive import Family, primitives
from ember.autograd.function import FunctionPrimitive
from ember.ops.registry import InplacePrimitive

FILES = (test_sweep_unary, test_sweep_binary, test_sweep_reduce, test_sweep_views,
         test_sweep_nn, test_sweep_linalg, test_sweep_misc)

# Primitives and members no sweep case can compare with torch.func, and why.
LEFT_OUT = {
    "ternary._fake_quantize_learnable_per_tensor_affine_backward": "the learnable fake "
        "quantisations' backward factors: bound only by their VJP, whose torch kernel takes "
        "float32 only (the sweep's vjp runs float64)",
    "ternary._fake_quantize_learnable_per_channel_affine_backward": "as the per-tensor one",
    "sparse_coo": "sparse tensors: torch.func transforms refuse sparse layouts",
    "values": "sparse tensors", "sparse_convert": "sparse tensors",
    "gather_coo": "sparse tensors", "sparse_mm": "sparse tensors", "sparse_mul": "sparse tensors",
    "sparse_compressed": "sparse tensors (CSR / CSC)", "sparse_compressed_values": "sparse tensors",
    "sparse_compressed_convert": "sparse tensors", "sparse_compressed_gather": "sparse tensors",
    "adam_step": "an optimizer's fused update: not a function torch.func transforms",
    "sgd_step": "an optimizer's fused update", "adadelta_step": "an optimizer's fused update",
    "rms_step": "an optimizer's fused update",
    "nll_log_softmax_backward": "a compiled graph's fusion of two backward kernels: bound "
                                "only inside compiled programs, never by an op",
    "batch_norm_update_stats": "BatchNorm's running-buffer update: a side effect on a buffer "
                               "(under no_grad), not a function torch.func transforms",
    "embedding_row_scale": "embedding's max_norm renormalises the weight in place, a side "
                           "effect on an input: the sweep compares pure functions",
    "ctc_loss_backward": "bound only by ctc_loss's VJP (the ctc_loss case compares that vjp); "
                         "torch has no forward or batching rule for ctc_loss to compare with",
    **{f"sample.drawn_{m}": "a draw linked to the tensor parameters it was drawn from (a "
                            "zero gradient, as PyTorch's graph has it): bound only when those "
                            "require grad, and the random cases draw from constants "
                            "(torch.func's randomness rules); test_random_ops compares it "
                            "with torch"
       for m in ("normal", "normal_mean", "normal_std", "poisson", "bernoulli")},
    "binary.glu": "GLU of float16 / bfloat16 halves only (the sweep runs float64, whose GLU is "
                  "the composite it reaches), and torch has no forward mode for them: "
                  "tests/ops/test_glu.py compares values, gradients and that refusal",
    "scatter.scatter_legacy": "scatter with the deprecated reduce='add' / 'multiply': no "
                              "derivative in torch (a NotImplemented node; "
                              "tests/ops/test_scatter_legacy.py compares it with torch)",
    "lstm_cell": "nn.LSTM's fused float32 step, bound only with no interpreter on the stack "
                 "(a transform sees the composite it stands for); tests/ops/test_rnn_cell.py "
                 "compares it with that composite bit for bit and with torch",
    "to_device": "one device here: a copy to the CPU from the CPU binds nothing, and torch.func "
                 "cannot run on 'meta' tensors' values",
}


class _Record(Interpreter):
    def __init__(self) -> None:
        self.seen: set = set()

    def process(self, prim, args, params):
        base = prim.base if isinstance(prim, InplacePrimitive) else prim
        fn = params.get("fn")
        self.seen.add(f"{base.name}.{fn.name}" if isinstance(base, Family) else base.name)
        return self.lower(prim, args, params)


def _catalogue() -> set:
    """Every primitive and family member ember defines (left out: a custom
    autograd.Function's own primitive, made per class, those other tests define, named
    test_..., and the MLX face's own, named mlx_..., registered when ember.mlx is imported
    and checked against MLX's in tests/mlx)."""
    out = set()
    for p in primitives:
        if isinstance(p, FunctionPrimitive) or p.name.startswith(("test_", "mlx_")):
            continue
        if isinstance(p, Family):
            out |= {f"{p.name}.{m}" for m in p.members if not m.startswith("mlx_")}
        else:
            out.add(p.name)
    return out


def _covered() -> set:
    rec = _Record()
    with interpret(rec):
        for mod in FILES:
            for case in mod.CASES:
                xs = [ember.tensor(a) for a in arrays(case, case.shapes, "float64", 0)]
                case.fn(ember, *xs)
                if case.complex:
                    xs = [ember.tensor(a) for a in arrays(case, case.shapes, "complex128", 0)]
                    case.fn(ember, *xs)
        for fn in test_sweep_misc.RANDOM.values():
            fn(ember, ember.tensor(np.full(4, 0.5)))  # (one example of the vmap tests)
    return rec.seen


def test_the_sweep_reaches_the_catalogue():
    covered = _covered()
    everything = _catalogue()
    covered &= everything
    missing = everything - covered - set(LEFT_OUT)
    assert not missing, f"not reached by any sweep case: {sorted(missing)}"
    assert everything - covered == set(LEFT_OUT)
    # the primitives and family members `python -m ember._core` lists (a new one moves these)
    assert (len(everything), len(covered)) == (357, 328)
