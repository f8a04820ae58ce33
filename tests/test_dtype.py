"""dtypes against torch: attributes, aliases, promotion for every pair, finfo / iinfo."""

import pickle

import pytest
import torch

import ember
from ember import _names

from helpers import DTYPE_PAIRS, E2T

DTYPES = [e for e, _ in DTYPE_PAIRS]
# NOTE: PyTorch promotes float16 with complex to complex32 (ComplexHalf); ember has no
# complex32 and gives complex64, the closest type it has.
COMPLEX32_CASES = {ember.float16}


def torch_dtype_name(d) -> str:
    return repr(d).replace("torch.", f"{_names.prefix}.")


@pytest.mark.parametrize("e,t", DTYPE_PAIRS, ids=str)
def test_dtype_attributes_match_torch(e, t):
    assert e.itemsize == t.itemsize
    assert e.is_floating_point == t.is_floating_point
    assert e.is_complex == t.is_complex
    assert e.is_signed == t.is_signed
    assert repr(e) == torch_dtype_name(t)
    assert E2T[e.to_real()] == t.to_real()
    assert ember.zeros(2, dtype=e).element_size() == torch.zeros(2, dtype=t).element_size()
    assert pickle.loads(pickle.dumps(e)) is e


def test_aliases_are_the_same_objects():
    pairs = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
             "int": "int32", "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}
    for alias, name in pairs.items():
        assert getattr(ember, alias) is getattr(ember, name)
        assert E2T[getattr(ember, alias)] == getattr(torch, alias)


@pytest.mark.parametrize("a", DTYPES, ids=str)
def test_promote_types_and_can_cast_for_all_pairs(a):
    for b in DTYPES:
        assert E2T[ember.promote_types(a, b)] == torch.promote_types(E2T[a], E2T[b]), (a, b)
        assert ember.can_cast(a, b) == torch.can_cast(E2T[a], E2T[b]), (a, b)


@pytest.mark.parametrize("a", DTYPES, ids=str)
def test_result_type_of_tensors_zero_dim_tensors_and_scalars(a):
    for b in DTYPES:
        if {a, b} & COMPLEX32_CASES and (a.is_complex or b.is_complex):
            continue
        for sa in [(2,), ()]:
            for sb in [(2,), ()]:
                got = ember.result_type(ember.ones(sa, dtype=a), ember.ones(sb, dtype=b))
                want = torch.result_type(torch.ones(sa, dtype=E2T[a]),
                                         torch.ones(sb, dtype=E2T[b]))
                assert E2T[got] == want, (a, sa, b, sb)
    for scalar in [True, 3, 2.5] + ([] if a in COMPLEX32_CASES else [1j]):
        for shape in [(2,), ()]:
            e, t = ember.ones(shape, dtype=a), torch.ones(shape, dtype=E2T[a])
            assert E2T[ember.result_type(e, scalar)] == torch.result_type(t, scalar)
            assert E2T[ember.result_type(scalar, e)] == torch.result_type(scalar, t)


def test_result_type_of_two_scalars():
    for a in [True, 3, 2.5, 1j]:
        for b in [True, 3, 2.5, 1j]:
            assert E2T[ember.result_type(a, b)] == torch.result_type(a, b)


def test_default_dtype_drives_float_inference():
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    for data in ([1.5], 2.5, [1, 2.5], [1j]):
        assert E2T[ember.tensor(data).dtype] == torch.tensor(data).dtype
    assert E2T[ember.result_type(ember.ones(2, dtype=ember.int32), 2.5)] == torch.result_type(
        torch.ones(2, dtype=torch.int32), 2.5)
    assert E2T[ember.arange(0.5, 3).dtype] == torch.arange(0.5, 3).dtype
    assert E2T[ember.zeros(2).dtype] == torch.zeros(2).dtype


def test_set_default_dtype_rejects_non_float_like_torch():
    for bad in (ember.int64, ember.bool):
        with pytest.raises(TypeError):
            ember.set_default_dtype(bad)
        with pytest.raises(TypeError):
            torch.set_default_dtype(E2T[bad])


@pytest.mark.parametrize("e", [d for d in DTYPES if d.is_floating_point or d.is_complex],
                         ids=str)
def test_finfo_matches_torch(e):
    fe, ft = ember.finfo(e), torch.finfo(E2T[e])
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(fe, attr) == getattr(ft, attr), attr
    assert repr(fe) == repr(ft)


def test_finfo_default_is_the_default_dtype():
    assert ember.finfo().eps == torch.finfo().eps
    with pytest.raises(TypeError):
        ember.finfo(ember.int32)
    with pytest.raises(TypeError):
        torch.finfo(torch.int32)


@pytest.mark.parametrize("e", [d for d in DTYPES if not (d.is_floating_point or d.is_complex)],
                         ids=str)
def test_iinfo_matches_torch(e):
    try:
        ft = torch.iinfo(E2T[e])
    except TypeError:
        with pytest.raises(TypeError, match="not supported"):
            ember.iinfo(e)
        return
    fe = ember.iinfo(e)
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(fe, attr) == getattr(ft, attr), attr
    assert repr(fe) == repr(ft)
    with pytest.raises(TypeError):
        ember.iinfo(ember.float32)


FLOAT8 = [(ember.float8_e4m3fn, torch.float8_e4m3fn), (ember.float8_e5m2, torch.float8_e5m2)]


@pytest.mark.parametrize("e,t", FLOAT8, ids=str)
def test_float8_attributes_and_finfo_match_torch(e, t):
    for attr in ("itemsize", "is_floating_point", "is_complex", "is_signed"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert repr(e) == torch_dtype_name(t)
    assert e.to_real() is e and ember.zeros(2, dtype=e).element_size() == 1
    fe, ft = ember.finfo(e), torch.finfo(t)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(fe, attr) == getattr(ft, attr), attr
    assert repr(fe) == repr(ft)
    assert ember.ones(2, dtype=e).type() == torch.ones(2, dtype=t).type()


@pytest.mark.parametrize("e,t", FLOAT8, ids=str)
def test_float8_promotes_only_with_itself_like_torch(e, t):
    assert ember.promote_types(e, e) is e
    for other in DTYPES + [d for d, _ in FLOAT8 if d is not e]:
        for a, b in ((e, other), (other, e)):
            with pytest.raises(RuntimeError) as want:
                torch.promote_types(E2T.get(a, t if a is e else torch.float8_e4m3fn
                                            if a is ember.float8_e4m3fn else torch.float8_e5m2),
                                    E2T.get(b, t if b is e else torch.float8_e4m3fn
                                            if b is ember.float8_e4m3fn else torch.float8_e5m2))
            with pytest.raises(RuntimeError) as got:
                ember.promote_types(a, b)
            assert str(got.value) == str(want.value)
        if other in E2T:
            assert ember.can_cast(e, other) == torch.can_cast(t, E2T[other]), other
            assert ember.can_cast(other, e) == torch.can_cast(E2T[other], t), other
    # a number or a 0-d tensor of the same category does not promote; an integer tensor does
    x, y = ember.ones(2, dtype=e), torch.ones(2, dtype=t)
    for other in (1.5, 3, True):
        assert E2T.get(ember.result_type(x, other), t) == torch.result_type(y, other)
    assert ember.result_type(x, ember.tensor(2.0)) is e
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        ember.result_type(ember.ones(2, dtype=ember.int32), ember.tensor(1.0, dtype=e))


@pytest.mark.parametrize("bad", ["int64", "bool", "complex64", "float", None, 3])
def test_set_default_dtype_refuses_as_torch_does(bad):
    msgs = []
    for L in (ember, torch):
        arg = getattr(L, bad) if bad in ("int64", "bool", "complex64") else bad
        with pytest.raises(TypeError) as info:
            L.set_default_dtype(arg)
        msgs.append(str(info.value))
        assert L.get_default_dtype() is L.float32
    assert msgs[0] == msgs[1]


def test_finfo_and_iinfo_arguments_and_equality_as_torch():
    """finfo(float) is float64's, iinfo(int) int64's; other arguments refused in the
    parser's words; equal limits compare equal (and are unhashable, as torch's)."""
    from fresh_process import with_server

    script = "\n".join([
        "torch = __import__(LIB)",
        "print(torch.finfo(torch.float32) == torch.finfo(torch.float32),"
        " torch.finfo(torch.float32) == torch.finfo(torch.float64))",
        "print(torch.finfo(float).dtype, torch.iinfo(int).dtype, torch.finfo().dtype)",
        "for f, a in ((torch.finfo, 'float32'), (torch.finfo, int), (torch.finfo, 3),"
        " (torch.iinfo, 'int32'), (torch.iinfo, bool), (torch.iinfo, float)):",
        "    try: print(f(a))",
        "    except TypeError as e: print(str(e).replace('ember', 'torch'))",
        "try: hash(torch.finfo(torch.float32))",
        "except TypeError: print('unhashable')",
    ])
    # (each in a fresh child of a server that imported the library: tests/fresh_process.py)
    outs = [with_server(m).run_code(script.replace("LIB", repr(m)), timeout=120).stdout
            for m in ("ember", "torch")]
    assert outs[0] == outs[1] and "unhashable" in outs[0]
