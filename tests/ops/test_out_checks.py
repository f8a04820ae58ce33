"""_out_checks.py against torch: the dtype an `out=` tensor must have, per kernel family, with
PyTorch's message (max/min/argmax/aminmax/softmax cast nothing; amax, cummax, logcumsumexp,
logsumexp and frexp have wordings of their own), and that a right-typed `out` still works."""

import pytest
import torch

import ember

from helpers import assert_same, same_message

F32, F64, I32, I64 = "float32", "float64", "int32", "int64"


def _x(L, dtype="float32"):
    return L.tensor([[3.0, 1.0, 3.0], [0.5, 2.0, -1.0]]).to(getattr(L, dtype))


def _outs(L, *dtypes):
    return tuple(L.empty(0, dtype=getattr(L, d)) for d in dtypes)


# (name, call(L, out), out dtypes that torch refuses, out dtypes it takes)
PAIRS = [
    ("max", lambda L, o: L.max(_x(L), 1, out=o)),
    ("min", lambda L, o: L.min(_x(L), 1, keepdim=True, out=o)),
    ("aminmax", lambda L, o: L.aminmax(_x(L), dim=1, out=o)),
    ("cummax", lambda L, o: L.cummax(_x(L), 1, out=o)),
    ("cummin", lambda L, o: L.cummin(_x(L), 0, out=o)),
]
PAIR_INDICES = {"max": I64, "min": I64, "aminmax": F32, "cummax": I64, "cummin": I64}


@pytest.mark.parametrize("name,call", PAIRS, ids=[p[0] for p in PAIRS])
@pytest.mark.parametrize("wrong", ["values64", "indices32", "both", "values_int"])
def test_pair_out_of_another_dtype_is_refused_as_torch(name, call, wrong):
    second = PAIR_INDICES[name]
    first, second = {"values64": (F64, second), "indices32": (F32, I32 if second == I64 else F64),
                     "both": (F64, I32), "values_int": (I64, second)}[wrong]
    same_message(lambda L: call(L, _outs(L, first, second)))


@pytest.mark.parametrize("name,call", PAIRS, ids=[p[0] for p in PAIRS])
def test_pair_out_of_the_right_dtype_is_filled(name, call):
    oe, ot = _outs(ember, F32, PAIR_INDICES[name]), _outs(torch, F32, PAIR_INDICES[name])
    re, rt = call(ember, oe), call(torch, ot)
    assert type(re).__name__ == type(rt).__name__  # <name>_out
    for a, b, o in zip(re, rt, oe):
        assert a is o
        assert_same(a, b)


SINGLE = [  # (call(L, out dtype), refused dtypes, taken dtypes)
    ("amax", lambda L, d: L.amax(_x(L), 1, out=L.empty(0, dtype=getattr(L, d))), [F64, I64], [F32]),
    ("amin_int", lambda L, d: L.amin(_x(L, I64), (0, 1), out=L.empty(0, dtype=getattr(L, d))),
     [F32, I32], [I64]),
    ("argmax", lambda L, d: L.argmax(_x(L), 1, out=L.empty(0, dtype=getattr(L, d))), [I32, F32],
     [I64]),
    ("argmin_all", lambda L, d: L.argmin(_x(L), out=L.empty(0, dtype=getattr(L, d))), [I32],
     [I64]),
    ("softmax", lambda L, d: L.softmax(_x(L), 1, out=L.empty(0, dtype=getattr(L, d))), [F64],
     [F32]),
    ("softmax_dtype", lambda L, d: L.softmax(_x(L), 1, dtype=L.float64,
                                             out=L.empty(0, dtype=getattr(L, d))), [F32], [F64]),
    # an integer input with a float out: the out check comes before the kernel's dtype check
    ("softmax_int", lambda L, d: L.softmax(_x(L, I64), 1, out=L.empty(0, dtype=getattr(L, d))),
     [F32], []),
    ("log_softmax", lambda L, d: L.log_softmax(_x(L), 0, out=L.empty(0, dtype=getattr(L, d))),
     [I64, F64], [F32]),
    ("logcumsumexp", lambda L, d: L.logcumsumexp(_x(L), 1, out=L.empty(0, dtype=getattr(L, d))),
     [F64, I64, "complex64"], [F32]),
    ("logcumsumexp_int", lambda L, d: L.logcumsumexp(_x(L, I64), 1,
                                                     out=L.empty(0, dtype=getattr(L, d))),
     [F32], []),
    # logsumexp casts into any floating or complex out, and refuses the others
    ("logsumexp", lambda L, d: L.logsumexp(_x(L), 1, out=L.empty(0, dtype=getattr(L, d))),
     [I64, "bool"], [F32, F64, "float16", "complex64"]),
    ("logsumexp_int", lambda L, d: L.logsumexp(_x(L, I64), 1, out=L.empty(0, dtype=getattr(L, d))),
     [I64], [F64]),
]


@pytest.mark.parametrize("name,call,refused,taken", SINGLE, ids=[s[0] for s in SINGLE])
def test_single_out_dtype_as_torch(name, call, refused, taken):
    for d in refused:
        same_message(lambda L, d=d: call(L, d))
    for d in taken:
        # softmax / logsumexp take float32 exponentials (NumPy's vector exp may be one ulp
        # from torch's) before summing, even into a float64 out: a float32-ulp tolerance
        assert_same(call(ember, d), call(torch, d), rtol=1e-6, atol=1e-7)


def test_logsumexp_into_a_wider_out_sums_in_its_dtype():
    # PyTorch adds float32 exponentials in float64 (and takes the log there): the result is
    # not float32 logsumexp widened. Exponentials of 0 and of -inf are exact on both sides.
    x = [[0.0, 0.0, 0.0, float("-inf")], [float("-inf")] * 4, [float("inf"), 0.0, 0.0, 0.0]]
    got = ember.logsumexp(ember.tensor(x), 1, out=ember.empty(0, dtype=ember.float64))
    want = torch.logsumexp(torch.tensor(x), 1, out=torch.empty(0, dtype=torch.float64))
    assert_same(got, want, rtol=0, atol=0)
    assert got[0].item() == torch.tensor(3.0, dtype=torch.float64).log().item()


@pytest.mark.parametrize("mantissa,exponent", [(F64, I32), (F64, I64), ("float16", I32),
                                               (F32, I64), (F32, "int16")])
def test_frexp_out_dtypes_as_torch(mantissa, exponent):
    same_message(lambda L: L.frexp(_x(L), out=_outs(L, mantissa, exponent)))


def test_frexp_out_of_the_right_dtypes_is_filled():
    re = ember.frexp(_x(ember), out=_outs(ember, F32, I32))
    rt = torch.frexp(_x(torch), out=_outs(torch, F32, I32))
    assert type(re).__name__ == "frexp_out"
    assert_same(re.mantissa, rt.mantissa)
    assert_same(re.exponent, rt.exponent)


_PAIR_OPS = {
    "sort": lambda m, x, o: m.sort(x, 1, out=o), "topk": lambda m, x, o: m.topk(x, 2, 1, out=o),
    "kthvalue": lambda m, x, o: m.kthvalue(x, 2, 1, out=o),
    "mode": lambda m, x, o: m.mode(x, 1, out=o), "median": lambda m, x, o: m.median(x, 1, out=o),
    "nanmedian": lambda m, x, o: m.nanmedian(x, 1, out=o),
}


@pytest.mark.parametrize("dtypes", [("float64", "int64"), ("float32", "int32"),
                                    ("float64", "int32")], ids=str)
@pytest.mark.parametrize("name", list(_PAIR_OPS))
def test_values_indices_out_of_another_dtype_is_refused_in_each_kernels_words(name, dtypes):
    import torch

    msgs = []
    for m in (ember, torch):
        x = m.randn(3, 4)
        out = tuple(m.empty(0, dtype=getattr(m, d)) for d in dtypes)
        with pytest.raises(RuntimeError) as e:
            _PAIR_OPS[name](m, x, out)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
