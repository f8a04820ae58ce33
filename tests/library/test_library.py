"""ember.library.Library / define / impl and the module-level register_* functions against
torch.library: ops declared from schema strings, reached as `ops.<ns>.<name>[.overload]`."""

# ruff: noqa: UP006, UP035, UP045 - the typing forms users annotate custom ops with

import itertools
import re
from typing import Optional

import pytest
import torch
from tests.helpers import assert_same

import ember

_ids = itertools.count()
_alive = []  # a Library's ops last as long as the Library object, in both


def _ns(L) -> str:
    return f"gaps_lib_{'t' if L is torch else 'e'}{next(_ids)}"


def same_message(call, kind: type = RuntimeError) -> str:
    """`call(L)` raises `kind` in both with the same text, namespaces read as NS; ember's
    may stop short of PyTorch's tail (the source lines of C++ registrations, a link for
    Facebook employees, a caret under a schema's error)."""
    msgs = []
    for L in (ember, torch):
        with pytest.raises(kind) as info:
            call(L)
        text = re.sub(r"gaps_lib_[et]\d+", "NS", str(info.value))
        # (PyTorch's parser draws a caret under the error; its first line says what it is)
        text = text.split(" Duplicate registration:")[0].split("'NS::myadd' is only")[0]
        msgs.append(text.split("\n~")[0].split("\n   ")[0])
    assert len(msgs[0]) > 20 and msgs[1].startswith(msgs[0].rstrip()), msgs
    return msgs[0]


def _myadd_lib(L):
    lib = L.library.Library(_ns(L), "DEF")
    lib.define("myadd(Tensor x, Tensor y, *, float alpha=1) -> Tensor")
    lib.define("myadd.Scalar(Tensor x, Scalar y) -> Tensor")
    _alive.append(lib)
    return lib, getattr(L.ops, lib.ns)


@pytest.mark.parametrize("L", [ember, torch])
def test_define_and_impl_per_key(L):
    lib, ops = _myadd_lib(L)
    assert ops.myadd.overloads() == ["default", "Scalar"]
    assert str(ops.myadd.default._schema) == \
        f"{lib.ns}::myadd(Tensor x, Tensor y, *, float alpha=1) -> Tensor" or L is torch
    lib.impl("myadd", lambda x, y, alpha=1: x + alpha * y, "CPU")
    lib.impl("myadd.Scalar", lambda x, y: x + y, "CompositeImplicitAutograd")
    one = L.ones(1)
    assert ops.myadd(one, one, alpha=2).tolist() == [3.0]
    assert ops.myadd.default(one, one).tolist() == [2.0]
    # the packet picks the overload the arguments fit
    assert ops.myadd(one, 2).tolist() == [3.0]
    # a composite is differentiated through
    y = ops.myadd.Scalar(L.ones(1, requires_grad=True), 2)
    assert type(y.grad_fn).__name__ == "AddBackward0"
    assert ops.myadd.default.name() == f"{lib.ns}::myadd"
    assert ops.myadd.Scalar.name() == f"{lib.ns}::myadd.Scalar"


def test_schema_errors_and_duplicates():
    for schema in ("bad(Tensor x -> Tensor", "bad2(Foo x) -> Tensor"):
        same_message(lambda L, s=schema: L.library.Library(_ns(L), "DEF").define(s))
    msg = same_message(lambda L: _myadd_lib(L)[0].define("myadd(Tensor x) -> Tensor"))
    assert msg.startswith("Tried to register an operator (NS::myadd(Tensor x) -> Tensor)")


def test_definitions_end_with_the_library():
    for L in (ember, torch):
        lib = L.library.Library(_ns(L), "DEF")
        lib.define("gone(Tensor x) -> Tensor")
        ns = lib.ns
        del lib
        with pytest.raises(AttributeError):
            _ = getattr(L.ops, ns).gone
        L.library.Library(ns, "DEF")  # the namespace is free again


def test_library_kinds():
    assert same_message(lambda L: L.library.Library("x", "FOO"), ValueError) == \
        "Unsupported kind: FOO"

    def twice(L):
        ns = _ns(L)
        first = L.library.Library(ns, "DEF")
        L.library.Library(ns, "DEF")
        del first

    assert same_message(twice).startswith("Only a single TORCH_LIBRARY can be used")
    for L in (ember, torch):
        lib, _ = _myadd_lib(L)
        frag = L.library.Library(lib.ns, "FRAGMENT")
        assert frag.define("other(Tensor x) -> Tensor") == "other"


def test_missing_names():
    def missing_op(L):
        _, ops = _myadd_lib(L)
        return ops.nothere

    def missing_overload(L):
        _, ops = _myadd_lib(L)
        return ops.myadd.nothere

    assert same_message(missing_op, AttributeError) == \
        "'_OpNamespace' 'NS' object has no attribute 'nothere'"
    assert same_message(missing_overload, AttributeError) == \
        "The underlying op of 'NS.myadd' has no overload name 'nothere'"


def test_no_kernel_for_cpu_or_meta():
    msg = same_message(lambda L: _myadd_lib(L)[1].myadd(L.ones(1), L.ones(1)),
                       NotImplementedError)
    assert msg.startswith("Could not run 'NS::myadd' with arguments from the 'CPU' backend.")

    def meta(L):
        lib, ops = _myadd_lib(L)
        lib.impl("myadd", lambda x, y, alpha=1: x + y, "CPU")
        ops.myadd(L.ones(1, device="meta"), L.ones(1, device="meta"))

    assert same_message(meta, NotImplementedError).startswith(
        "NS::myadd: attempted to run this operator with Meta tensors")


@pytest.mark.parametrize("L", [ember, torch])
def test_impl_before_define_waits_for_the_op(L):
    lib = L.library.Library(_ns(L), "FRAGMENT")
    lib.impl("later", lambda x: x * 5, "CPU")
    lib.define("later(Tensor x) -> Tensor")
    _alive.append(lib)
    assert getattr(L.ops, lib.ns).later(L.ones(1)).tolist() == [5.0]


def test_module_level_functions_and_register_autograd():
    res = {}
    for L in (ember, torch):
        ns = _ns(L)
        L.library.define(f"{ns}::triple", "(Tensor x) -> Tensor")
        L.library.impl(f"{ns}::triple", "cpu")(lambda x, L=L: L.from_numpy(x.numpy() * 3))
        op = getattr(L.ops, ns).triple
        res[L, "plain"] = op(L.ones(2)).tolist()

        def backward(ctx, g):
            return g * 3

        L.library.register_autograd(f"{ns}::triple", backward)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        op(x).sum().backward()
        res[L, "grad"] = x.grad
        L.library.register_fake(f"{ns}::triple", lambda x, L=L: L.empty_like(x))
        res[L, "meta"] = tuple(op(L.empty(4, device="meta")).shape)
        L.library.register_kernel(f"{ns}::triple", "cpu", lambda x: x * 4)
        res[L, "kernel"] = op(L.ones(2)).tolist()
    for key in ("plain", "meta", "kernel"):
        assert res[ember, key] == res[torch, key]
    assert_same(res[ember, "grad"], res[torch, "grad"], 0, 0)


def test_qualname_errors():
    assert same_message(lambda L: L.library.register_autograd("zzz", lambda c, g: g),
                        ValueError).startswith('Expected `qualname` to be of the form')

    def unknown(L):
        _, ops = _myadd_lib(L)
        L.library.register_autograd(f"{ops.myadd.default._namespace}::zzz", lambda c, g: g)

    assert same_message(unknown, AttributeError) == \
        "'_OpNamespace' 'NS' object has no attribute 'zzz'"


def test_vmap_sees_through_a_composite():
    outs = {}
    for L in (ember, torch):
        lib = L.library.Library(_ns(L), "DEF")
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
        _alive.append(lib)
        outs[L] = L.func.vmap(getattr(L.ops, lib.ns).twice)(L.arange(6.0).reshape(2, 3))
    assert_same(outs[ember], outs[torch], 0, 0)


def test_optional_and_list_arguments_in_schema():
    outs = {}
    for L in (ember, torch):
        lib = L.library.Library(_ns(L), "DEF")
        lib.define("pick(Tensor[] xs, int i, Tensor? bias=None) -> Tensor")

        def pick(xs, i, bias: Optional[object] = None):
            return xs[i] if bias is None else xs[i] + bias

        lib.impl("pick", pick, "CPU")
        _alive.append(lib)
        op = getattr(L.ops, lib.ns).pick
        outs[L] = (op([L.ones(2), L.zeros(2)], 1).tolist(),
                   op([L.ones(2)], 0, L.ones(2)).tolist())
    assert outs[ember] == outs[torch]


def test_impl_abstract_is_register_fake_with_a_future_warning():
    for L in (ember, torch):
        lib, ops = _myadd_lib(L)
        lib.impl("myadd", lambda x, y, alpha=1: x + y, "CPU")
        with pytest.warns(FutureWarning, match="was renamed to `torch.library.register_fake`"):
            L.library.impl_abstract(f"{lib.ns}::myadd", lambda x, y, alpha=1, L=L: L.empty_like(x))
        out = ops.myadd(L.ones(2, device="meta"), L.ones(2, device="meta"))
        assert out.device.type == "meta" and tuple(out.shape) == (2,)
