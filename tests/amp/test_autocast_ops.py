"""The ops of PyTorch's CPU autocast lists: inside `autocast("cpu", bfloat16)`, with bfloat16
(and float32) inputs, each gives torch's dtype and values (and raises where torch raises)."""

import numpy as np
import pytest
import torch

import ember
from ember._cpu import onednn_bf16

from helpers import assert_same


def _arr(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).uniform(0.1, 1.0, shape).astype(np.float32)


def _inputs(m):
    bf = lambda a: m.tensor(a).to(m.bfloat16)  # noqa: E731
    eye = m.eye(4)
    return {
        "h": bf(_arr(4, 4)), "h3": bf(_arr(2, 3, 4)), "h4": bf(_arr(1, 2, 4, 4)),
        "h5": bf(_arr(1, 2, 4, 4, 4)), "f": m.tensor(_arr(4, 4, seed=1)), "eye": eye,
        "sig": bf(_arr(64)), "grid": bf(_arr(1, 3, 3, 2) * 2 - 1), "pairs": bf(_arr(4, 2)),
        "tgt": m.tensor([0, 1, 2, 3]), "ml": m.tensor([[3, 0, -1, 1]] * 4),
        "ctc_in": bf(_arr(5, 1, 4)).float().log_softmax(2).to(m.bfloat16),
        "x3": m.tensor(_arr(2, 3, 4, seed=2)), "rows": bf(_arr(30, 3)),
    }


CASES = {
    "prod": lambda m, F, t: t["h"].prod(),
    "prod_dim": lambda m, F, t: t["h"].prod(1),
    "cdist": lambda m, F, t: m.cdist(t["h"], t["h"]),
    "cdist_mm": lambda m, F, t: m.cdist(t["rows"], t["rows"]),  # > 25 rows: through a matmul
    "trace": lambda m, F, t: m.trace(t["h"]),
    "pad_reflect": lambda m, F, t: F.pad(t["h3"], (1, 1), mode="reflect"),
    "pad_replicate": lambda m, F, t: F.pad(t["h3"], (1, 1), mode="replicate"),
    "pad_reflect2d": lambda m, F, t: F.pad(t["h4"], (1, 1, 1, 1), mode="reflect"),
    "pad_reflect3d": lambda m, F, t: F.pad(t["h5"], (1, 1, 1, 1, 1, 1), mode="reflect"),
    "pad_replicate3d": lambda m, F, t: F.pad(t["h5"], (1, 1, 1, 1, 1, 1), mode="replicate"),
    "pad_circular": lambda m, F, t: F.pad(t["h3"], (1, 1), mode="circular"),
    "pad_constant": lambda m, F, t: F.pad(t["h3"], (1, 1)),
    "triplet": lambda m, F, t: F.triplet_margin_loss(t["h"], t["h"].flip(0), t["h"].t()),
    "hinge": lambda m, F, t: F.hinge_embedding_loss(t["h"], t["h"]),
    "soft_margin": lambda m, F, t: F.soft_margin_loss(t["h"], t["h"]),
    "poisson": lambda m, F, t: F.poisson_nll_loss(t["h"], t["h"]),
    "multi_margin": lambda m, F, t: F.multi_margin_loss(t["h"], t["tgt"]),
    "cosine_emb": lambda m, F, t: F.cosine_embedding_loss(t["h"], t["h"].t(), m.ones(4)),
    "margin_ranking": lambda m, F, t: F.margin_ranking_loss(t["h"][0], t["h"][1], m.ones(4)),
    "multilabel_margin": lambda m, F, t: F.multilabel_margin_loss(t["h"], t["ml"]),
    "multilabel_soft_margin": lambda m, F, t: F.multilabel_soft_margin_loss(t["h"], t["h"]),
    "avg_pool3d": lambda m, F, t: F.avg_pool3d(t["h5"], 2),
    "max_pool3d": lambda m, F, t: F.max_pool3d(t["h5"], 2),
    "adaptive_avg_pool3d": lambda m, F, t: F.adaptive_avg_pool3d(t["h5"], 2),
    "adaptive_max_pool3d": lambda m, F, t: F.adaptive_max_pool3d(t["h5"], 2),
    "avg_pool2d": lambda m, F, t: F.avg_pool2d(t["h4"], 2),
    "max_unpool2d": lambda m, F, t: F.max_unpool2d(*F.max_pool2d(t["h4"], 2,
                                                                 return_indices=True), 2),
    "prelu": lambda m, F, t: F.prelu(t["h"], m.full((1,), 0.25)),
    "prelu_f32": lambda m, F, t: F.prelu(t["f"] - 0.5, m.full((1,), 0.25)),
    "vecdot": lambda m, F, t: m.linalg.vecdot(t["h"], t["h"]),
    "vecdot_f32": lambda m, F, t: m.linalg.vecdot(t["f"], t["f"]),
    "inv": lambda m, F, t: m.linalg.inv(t["h"] + t["eye"]),
    "rfft": lambda m, F, t: m.fft.rfft(t["h"]),
    "fft": lambda m, F, t: m.fft.fft(t["h"]),
    "irfft": lambda m, F, t: m.fft.irfft(t["h"]),
    "fft2": lambda m, F, t: m.fft.fft2(t["h"]),
    "ifft": lambda m, F, t: m.fft.ifft(t["h"]),
    "hfft": lambda m, F, t: m.fft.hfft(t["h"]),
    "ihfft": lambda m, F, t: m.fft.ihfft(t["h"]),
    "quantile": lambda m, F, t: m.quantile(t["h"], 0.3, dim=1),
    "nanquantile": lambda m, F, t: m.nanquantile(t["h"], 0.3),
    "stft": lambda m, F, t: m.stft(t["sig"], 16, return_complex=True),
    "grid_sample": lambda m, F, t: F.grid_sample(t["h4"], t["grid"], align_corners=False),
    "index_copy": lambda m, F, t: t["h"].index_copy(0, m.tensor([0, 1]), t["f"][:2]),
    "index_copy_low": lambda m, F, t: t["h"].index_copy(0, m.tensor([0, 1]), t["h"][2:]),
    "cat": lambda m, F, t: m.cat([t["h"], t["f"]]),
    "stack_low": lambda m, F, t: m.stack([t["h"], t["h"]]),
    "ctc": lambda m, F, t: F.ctc_loss(t["ctc_in"], m.tensor([[1, 2]]), m.tensor([5]),
                                      m.tensor([2])),
    "cholesky": lambda m, F, t: m.linalg.cholesky(t["h"] @ t["h"].mT + t["eye"]),
    "solve": lambda m, F, t: m.linalg.solve(t["h"] + t["eye"], t["h"]),
    "svd": lambda m, F, t: m.linalg.svd(t["h"])[1],
    "svdvals": lambda m, F, t: m.linalg.svdvals(t["h"]),
    "qr": lambda m, F, t: m.linalg.qr(t["h"])[1].abs(),
    "eigh": lambda m, F, t: m.linalg.eigh(t["h"] + t["h"].mT)[0],
    "eigvalsh": lambda m, F, t: m.linalg.eigvalsh(t["h"] + t["h"].mT),
    "cond": lambda m, F, t: m.linalg.cond(t["h"] + t["eye"]),
    "lstsq": lambda m, F, t: m.linalg.lstsq(t["h"] + t["eye"], t["h"])[0],
    "eig": lambda m, F, t: m.linalg.eigvals(t["h"] + t["h"].mT).real.sort().values,
    "view_as_complex": lambda m, F, t: m.view_as_complex(t["pairs"]),
    "householder": lambda m, F, t: m.linalg.householder_product(t["h"], t["h"][0]),
    "tensorsolve": lambda m, F, t: m.linalg.tensorsolve(t["h"] + t["eye"], t["h"][0]),
    "softmax": lambda m, F, t: t["h"].softmax(0),
    "sum": lambda m, F, t: t["h"].sum(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_gives_torchs_dtype_and_values_under_autocast(case):
    fn = CASES[case]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = fn(torch, torch.nn.functional, _inputs(torch))
    with ember.autocast("cpu", dtype=ember.bfloat16):
        got = fn(ember, ember.nn.functional, _inputs(ember))
    assert_same(got, want, 2e-2, 2e-2)


def _recurrent(m, name, x, **kw):
    """The output and state dtypes of a recurrent module under autocast."""
    mod = getattr(m.nn, name)(4, 3, **kw)
    with m.autocast("cpu"):
        out = mod(x)
    flat = []
    for o in (out if isinstance(out, tuple) else (out,)):
        flat += list(o) if isinstance(o, tuple) else [o]
    return [str(o.dtype).split(".")[-1] for o in flat]


@pytest.mark.parametrize("name, low, kw, case", [
    ("LSTM", True, {}, "lstm"), ("GRU", True, {}, "gru"), ("RNN", True, {}, "rnn"),
    ("LSTM", False, {}, "lstm_f32"), ("GRU", False, {}, "gru_f32"),
    ("RNN", False, {}, "rnn_f32"),
    ("LSTM", False, {"num_layers": 2, "bidirectional": True}, "lstm_f32"),
    ("LSTMCell", False, {}, "lstm_cell_f32"), ("GRUCell", False, {}, "gru_cell_f32"),
    ("RNNCell", False, {}, "rnn_cell_f32"), ("GRUCell", True, {}, "gru_cell"),
])
def test_recurrent_modules_run_in_torchs_dtypes(name, low, kw, case):
    a = _arr(2, 3, 4) if "Cell" not in name else _arr(3, 4)
    got = _recurrent(ember, name, ember.tensor(a).to(ember.bfloat16 if low else ember.float32),
                     **kw)
    try:
        want = _recurrent(torch, name,
                          torch.tensor(a).to(torch.bfloat16 if low else torch.float32), **kw)
    except RuntimeError as e:  # (autocast's cast of a float32 input runs oneDNN's LSTM)
        if "primitive descriptor" not in str(e) or onednn_bf16():
            raise
        pytest.skip("torch's oneDNN has no bfloat16 LSTM on this CPU (no AVX-512)")
    assert got == want


def test_cpu_policy_names_the_lists_of_torch():
    from ember.amp.autocast_mode import CPU_POLICY

    assert CPU_POLICY["mm"] == "lower" and CPU_POLICY["prod"] == "fp32"
    assert {k for k, v in CPU_POLICY.items() if v == "promote"} == {"stack", "cat", "index_copy"}


def test_promote_casts_to_the_widest_floating_input():
    from ember.amp.autocast_mode import cast_for

    low, f32, f64 = ember.ones(2, dtype=ember.bfloat16), ember.ones(2), ember.ones(2).double()
    i = ember.ones(2, dtype=ember.int64)
    with ember.autocast("cpu"):
        assert [t.dtype for t in cast_for("promote", low, f32, i, f64)] == \
            [ember.float32, ember.float32, ember.int64, ember.float64]
        assert [t.dtype for t in cast_for("promote", low, low)] == [ember.bfloat16] * 2
    assert cast_for("promote", low, f32)[0] is low


def test_autocast_op_casts_then_runs_its_body_without_autocast():
    from ember.amp.autocast_mode import autocast_op

    seen = []

    @autocast_op("cat")  # promote, through a list
    def joined(tensors, dim=0, *, out=None):
        seen.append([t.dtype for t in tensors] + [ember.is_autocast_enabled("cpu"),
                                                  ember.mm(tensors[0], tensors[0]).dtype])
        return ember.cat(tensors, dim)

    low, f32 = ember.ones(2, 2, dtype=ember.bfloat16), ember.ones(2, 2)
    with ember.autocast("cpu"):
        joined([low, f32])
        joined([low, low])
        joined([low, f32], out=ember.empty(0))  # another overload: no cast
        assert ember.mm(f32, f32).dtype is ember.bfloat16  # the region is on again
    joined([low, f32])
    b, f, on = ember.bfloat16, ember.float32, True
    assert seen == [[f, f, False, f], [b, b, False, b], [b, f, on, b], [b, f, False, b]]
