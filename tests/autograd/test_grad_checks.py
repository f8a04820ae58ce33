"""autograd.grad's argument checks against torch: which check fires first (the flags, an
empty `inputs`, each grad_output against its output, then the engine's counts, outputs and
inputs), with torch's exception types and messages; dict inputs, only_inputs, and
materialize_grads with create_graph or batched grads."""

import warnings

import pytest
import torch

import ember


def _leaves(m):
    return m.ones(2, requires_grad=True), m.ones(3, requires_grad=True), m.ones(2)


def _scalar(m, a):
    return (a * 2).sum()


CALLS = {
    "outputs_checked_before_inputs": lambda m, a, b, n: m.autograd.grad(n.sum(), n),
    "empty_inputs": lambda m, a, b, n: m.autograd.grad(_scalar(m, a), []),
    "empty_inputs_before_outputs": lambda m, a, b, n: m.autograd.grad(n.sum(), ()),
    "empty_both": lambda m, a, b, n: m.autograd.grad([], []),
    "empty_inputs_batched": lambda m, a, b, n: m.autograd.grad(
        _scalar(m, a), [], m.ones(4), is_grads_batched=True),
    "input_no_grad": lambda m, a, b, n: m.autograd.grad(_scalar(m, a), [a, n]),
    "input_not_tensor": lambda m, a, b, n: m.autograd.grad(_scalar(m, a), [a, 1]),
    "input_nested_list": lambda m, a, b, n: m.autograd.grad(_scalar(m, a), [[a]]),
    "input_not_tensor_after_outputs": lambda m, a, b, n: m.autograd.grad(n.sum(), [1]),
    "output_not_tensor": lambda m, a, b, n: m.autograd.grad([_scalar(m, a), None], [a]),
    "output_not_tensor_before_no_grad": lambda m, a, b, n: m.autograd.grad([n.sum(), 1], [a]),
    "second_output_no_grad": lambda m, a, b, n: m.autograd.grad(
        [_scalar(m, a), n.sum()], [a], [None, m.ones(())]),
    "fewer_grad_outputs": lambda m, a, b, n: m.autograd.grad(
        [_scalar(m, a), _scalar(m, a)], [a], [m.ones(())]),
    "one_grad_output_two_outputs": lambda m, a, b, n: m.autograd.grad(
        [_scalar(m, a), _scalar(m, a)], [a], m.ones(())),
    "shape_mismatch": lambda m, a, b, n: m.autograd.grad(a * 2, a, m.ones(3)),
    "shape_mismatch_before_no_grad": lambda m, a, b, n: m.autograd.grad(n * 2, a, m.ones(3)),
    "shape_mismatch_before_count": lambda m, a, b, n: m.autograd.grad(
        [a * 2, _scalar(m, a)], [a], [m.ones(3)]),
    # (torch names the pair through grads.index / outputs.index, comparing tensors with ==)
    "shape_mismatch_second": lambda m, a, b, n: m.autograd.grad(
        [_scalar(m, a), a * 2], a, [None, m.ones(3)]),
    "implicit_non_scalar": lambda m, a, b, n: m.autograd.grad(a * 2, a),
    "grad_output_not_tensor": lambda m, a, b, n: m.autograd.grad(_scalar(m, a), a, [1]),
    "grad_outputs_a_number": lambda m, a, b, n: m.autograd.grad(_scalar(m, a), a, 1.0),
    "complex_grad_output": lambda m, a, b, n: m.autograd.grad(
        _scalar(m, a), a, m.ones((), dtype=m.complex64)),
    "unused": lambda m, a, b, n: m.autograd.grad(_scalar(m, a), [a, b]),
    "materialize_and_not_allow_unused": lambda m, a, b, n: m.autograd.grad(
        n.sum(), [], materialize_grads=True, allow_unused=False),
    "batched_shape": lambda m, a, b, n: m.autograd.grad(
        a * 2, a, m.ones(4, 3), is_grads_batched=True),
    "batched_shape_second": lambda m, a, b, n: m.autograd.grad(
        [_scalar(m, a), a * 2], a, [m.ones(4), m.ones(4, 3)], is_grads_batched=True),
    "batched_implicit": lambda m, a, b, n: m.autograd.grad(
        _scalar(m, a), a, is_grads_batched=True),
    "batched_0d": lambda m, a, b, n: m.autograd.grad(
        _scalar(m, a), a, m.ones(()), is_grads_batched=True),
    "batched_sizes_differ": lambda m, a, b, n: m.autograd.grad(
        [_scalar(m, a), _scalar(m, a)], a, [m.ones(4), m.ones(3)], is_grads_batched=True),
    "batched_output_no_grad": lambda m, a, b, n: m.autograd.grad(
        n.sum(), a, m.ones(4), is_grads_batched=True),
    "batched_input_no_grad": lambda m, a, b, n: m.autograd.grad(
        _scalar(m, a), n, m.ones(4), is_grads_batched=True),
    "mapping_not_dict": lambda m, a, b, n: m.autograd.grad(
        _scalar(m, a), __import__("types").MappingProxyType({"a": a})),
}


def _raised(m, call):
    try:
        call(m, *_leaves(m))
    except Exception as exc:  # noqa: BLE001 - compared across the two libraries below
        return type(exc), str(exc).replace("ember.", "torch.")
    raise AssertionError(f"{m.__name__} did not raise")


@pytest.mark.parametrize("name", list(CALLS))
def test_grad_check_order_types_and_messages_match_torch(name):
    assert _raised(ember, CALLS[name]) == _raised(torch, CALLS[name])


def test_reported_repros():
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and "
                                           "does not have a grad_fn$"):
        ember.autograd.grad(ember.ones(2).sum(), ember.ones(2))
    a = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot be "
                                           "empty.$"):
        ember.autograd.grad((a * 2).sum(), [])


def test_dict_inputs_give_a_dict():
    res = {}
    for m in (ember, torch):
        a, b, _ = _leaves(m)
        res[m] = m.autograd.grad((a * 3).sum() + (b * b).sum(), {"x": a, "y": b})
    assert list(res[ember]) == list(res[torch]) == ["x", "y"]
    for k in ("x", "y"):
        assert res[ember][k].tolist() == res[torch][k].tolist()


def test_only_inputs_false_warns_as_torch():
    got = []
    for m in (ember, torch):
        a = _leaves(m)[0]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            (g,) = m.autograd.grad(_scalar(m, a), a, only_inputs=False)
        got.append([(x.category, str(x.message)) for x in w])
        assert g.tolist() == [2.0, 2.0]
    assert got[0] == got[1] and got[0][0][0] is FutureWarning


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_follow_create_graph(create_graph):
    got = []
    for m in (ember, torch):
        a, b, _ = _leaves(m)
        ga, gb = m.autograd.grad((a * a).sum(), [a, b], materialize_grads=True,
                                 create_graph=create_graph)
        got.append((ga.tolist(), ga.requires_grad, gb.tolist(), gb.requires_grad))
    assert got[0] == got[1]
    assert got[0][3] is create_graph


def test_batched_materialized_zeros_are_unbatched_as_in_torch():
    res = []
    for m in (ember, torch):
        a, b, _ = _leaves(m)
        out = m.autograd.grad(a * a, [a, b], m.eye(2) * 3, is_grads_batched=True,
                              materialize_grads=True)
        res.append([(tuple(g.shape), g.tolist()) for g in out])
    assert res[0] == res[1]
