"""ember.library.opcheck against torch.library.opcheck: the checks that run eagerly
(test_schema, test_autograd_registration, test_faketensor), their failures and results."""

import itertools
import re

import numpy as np
import pytest
import torch

import ember

_ids = itertools.count()
_alive = []
EAGER = ("test_schema", "test_autograd_registration", "test_faketensor")


def _op(L, body: str, fake=None, mutates=()):
    ns = f"gaps_oc_{'t' if L is torch else 'e'}{next(_ids)}"

    def kernel(x: L.Tensor) -> L.Tensor:
        if body == "mutates":
            x.add_(1)
        if body == "view":
            return x.view(-1)
        return x.sin()

    op = L.library.custom_op(f"{ns}::{body}", mutates_args=mutates)(kernel)
    if fake is not None:
        op.register_fake(lambda x: fake(L, x))
    return op


def _results(call):
    """call(L) in both; the results with namespaces read as NS and exceptions as text."""
    out = []
    for L in (ember, torch):
        res = call(L)
        out.append({k: v if v == "SUCCESS" else re.sub(
            r"gaps_oc_[et]\d+", "NS", f"{type(v).__name__}: {v}").replace("torch.", "")
            .replace("ember.", "") for k, v in res.items()})
    return out


def test_a_good_op_passes_every_eager_check():
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    got = _results(lambda L: L.library.opcheck(
        _op(L, "good", lambda L, x: L.empty_like(x)), (L.tensor(x, requires_grad=True),),
        test_utils=EAGER))
    assert got[0] == got[1] == dict.fromkeys(EAGER, "SUCCESS")


@pytest.mark.parametrize("body,fake,test", [
    ("mutates", lambda L, x: L.empty_like(x), "test_schema"),
    ("view", lambda L, x: L.empty_like(x), "test_schema"),
    ("good", None, "test_faketensor"),
    ("good", lambda L, x: x.new_empty(x.shape[0] + 1), "test_faketensor"),
    ("good", lambda L, x: x.new_empty(x.shape, dtype=L.float64), "test_faketensor"),
])
def test_failures_reported_as_torch_does(body, fake, test):
    def call(L, raise_exception):
        return L.library.opcheck(_op(L, body, fake), (L.ones(3),), test_utils=test,
                                 raise_exception=raise_exception)

    got = _results(lambda L: call(L, False))
    norm = [re.sub(r" \(with implementation in <module [^>]*>\)", "", g[test]) for g in got]
    assert norm[0] == norm[1]
    for L in (ember, torch):
        with pytest.raises(Exception) as info:
            call(L, True)
        assert type(info.value).__name__ == "OpCheckError"
        assert str(info.value).startswith(f"opcheck(op, ...): {test} failed with ")


def test_declared_mutation_passes_schema_check():
    got = _results(lambda L: L.library.opcheck(_op(L, "mutates", mutates=("x",)),
                                               (L.ones(3),), test_utils="test_schema"))
    assert got[0] == got[1] == {"test_schema": "SUCCESS"}


def test_autograd_registration_flags_a_backend_kernel_that_records_a_graph():
    got = []
    for L in (ember, torch):
        lib = L.library.Library(f"gaps_oc_{'t' if L is torch else 'e'}{next(_ids)}", "DEF")
        _alive.append(lib)
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CPU")  # autograd at a backend key: wrong
        op = getattr(L.ops, lib.ns).twice.default
        res = L.library.opcheck(op, (L.ones(2, requires_grad=True),),
                                test_utils="test_autograd_registration", raise_exception=False)
        got.append(re.sub(r"gaps_oc_[et]\d+", "NS", str(res["test_autograd_registration"])))
    assert got[0] == got[1] and got[0].startswith("NS::twice: at least one output")


def test_bad_test_utils():
    msgs = []
    for L in (ember, torch):
        with pytest.raises(ValueError) as info:
            L.library.opcheck(_op(L, "good"), (L.ones(1),), test_utils="test_foo")
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_compiler_checks_refused_by_name():
    with pytest.raises(NotImplementedError, match="test_aot_dispatch_dynamic"):
        ember.library.opcheck(_op(ember, "good"), (ember.ones(1),),
                              test_utils="test_aot_dispatch_dynamic")
