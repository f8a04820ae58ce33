"""dtype_views.py against torch: view_as_real / view_as_complex and `.real` / `.imag` are
views of the complex storage (strides in real elements, `_base`, writes and version
counters shared), with PyTorch's nodes and gradients; bad input raises as PyTorch does.
view(dtype) (bytes checked in test_movement.py) is no autograd view, and batches."""

import numpy as np
import pytest
import torch

import ember
from ops._elementwise import same_outcome

from helpers import assert_same, rand_array

Z = [[1 + 2j, 3 - 1j, 0.5j], [0.5 + 0j, -2j, 4 + 4j]]


def _both(dtype="complex64"):
    return ember.tensor(Z, dtype=getattr(ember, dtype)), torch.tensor(Z, dtype=getattr(torch,
                                                                                       dtype))


@pytest.mark.parametrize("take", [
    lambda m, z: z.real, lambda m, z: z.imag, lambda m, z: m.real(z), lambda m, z: m.imag(z),
    lambda m, z: m.view_as_real(z), lambda m, z: z.t().real, lambda m, z: z.t().imag,
    lambda m, z: z[:, 1:].imag, lambda m, z: z[1, 2].imag, lambda m, z: z[:, ::2].real,
], ids=["real", "imag", "fn_real", "fn_imag", "view_as_real", "t_real", "t_imag",
        "slice_imag", "0d_imag", "step_real"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_parts_are_views_with_torchs_geometry(take, dtype):
    ze, zt = _both(dtype)
    e, t = take(ember, ze), take(torch, zt)
    assert_same(e, t, check_stride=True)
    assert e.storage_offset() == t.storage_offset()
    assert e._base is ze and t._base is zt


def test_writing_into_a_part_writes_into_the_complex_tensor():
    for m in (ember, torch):
        z = m.tensor(Z)
        r, i = z.real, z.imag
        z.real[0, 1] = 7.0
        z.imag.mul_(2)
        assert z._version == r._version == i._version == 2
        assert r[0, 1].item() == 7.0 and i[0, 0].item() == 4.0  # the views see the writes
        if m is ember:
            got = z.numpy()
        else:
            np.testing.assert_array_equal(got, z.numpy())
    x = ember.view_as_complex(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    x.imag.zero_()
    assert x._base.tolist() == [[1.0, 0.0], [3.0, 0.0]]


def test_a_real_tensor_is_its_own_real_part_and_has_no_imaginary_part():
    x = ember.tensor([1.0, 2.0])
    assert x.real is x and ember.real(x) is x
    same_outcome(lambda a: a.imag, lambda a: a.imag, (x,), (torch.tensor([1.0, 2.0]),))
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        ember.imag(x)


def _graph(y):
    names = []
    node = y.grad_fn
    while node is not None:
        names.append(type(node).__name__)
        nxt = [n for n, _ in node.next_functions if n is not None]
        node = nxt[0] if nxt else None
    return names


@pytest.mark.parametrize("f", [
    lambda m, z: z.real * 2 + z.imag * 3, lambda m, z: (m.view_as_real(z) ** 2).sum(-1),
    lambda m, z: m.view_as_complex(m.view_as_real(z) * 2).abs(),
    lambda m, z: z.t().imag.exp(), lambda m, z: z.real,
], ids=["parts", "view_as_real", "round_trip", "t_imag", "leaf_real"])
def test_nodes_and_gradients_match_torch(f):
    graphs, grads = [], []
    for m in (ember, torch):
        z = m.tensor(Z, dtype=m.complex128, requires_grad=True)
        y = f(m, z)
        graphs.append([n.replace("torch::autograd::", "") for n in _graph(y)])
        cot = m.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) - 2)
        grads.append(m.autograd.grad(y, z, cot)[0].numpy())
    assert graphs[0] == graphs[1]
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_view_as_complex_is_a_view_with_torchs_node_and_gradient():
    a = np.array([[1.0, 2.0], [3.0, -4.0], [0.5, 0.0]])
    outs = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.view_as_complex(x)
        assert y._base is x and type(y.grad_fn).__name__ == "ViewAsComplexBackward0"
        (y * (1 + 2j)).abs().sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12)


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(3, 4), lambda m: m.zeros(4, 2).t().contiguous().t(),
    lambda m: m.zeros(3, 3)[:, 1:], lambda m: m.zeros(7)[1:].view(3, 2),
    lambda m: m.tensor(1.0), lambda m: m.zeros(3, 2, dtype=m.int32),
    lambda m: m.zeros(3, 2)[::2], lambda m: m.zeros(2, dtype=m.float64),
    lambda m: m.zeros(3, 2, dtype=m.int64), lambda m: m.zeros(3, 2, dtype=m.bool),
], ids=["size", "stride1", "stride2", "offset", "0d", "int", "step", "1d", "long", "bool"])
def test_view_as_complex_refuses_what_torch_refuses(make):
    try:
        want = torch.view_as_complex(make(torch))
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as got:  # (the dtype as PyTorch names it: `Long`)
            ember.view_as_complex(make(ember))
        assert str(got.value) == str(exc)
        return
    got = ember.view_as_complex(make(ember))
    assert_same(got, want, check_stride=True)


def test_view_as_real_refuses_a_real_tensor():
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        ember.view_as_real(ember.zeros(3))


def test_parts_on_meta_and_under_vmap_and_jvp():
    z = ember.zeros(2, 3, dtype=ember.complex64, device="meta")
    assert z.imag.shape == (2, 3) and z.imag.stride() == (6, 2) and z.imag.dtype is ember.float32
    zs = ember.tensor(Z)
    out = ember.func.vmap(lambda v: v.imag * 2 + v.real)(zs)
    np.testing.assert_array_equal(out.numpy(), np.array(Z).imag * 2 + np.array(Z).real)
    out = ember.func.vmap(lambda v: ember.view_as_real(v), in_dims=1)(zs)
    np.testing.assert_array_equal(out.numpy(), ember.view_as_real(zs.t()).numpy())
    _, t = ember.func.jvp(lambda v: v.imag, (zs,), (zs * 1j,))
    np.testing.assert_allclose(t.numpy(), np.array(Z).real)


def test_view_dtype_shares_versions_but_is_no_autograd_view_as_torch():
    """PyTorch's view(dtype) is not differentiable and no view for autograd (`_base` None,
    so writing into it is allowed even over a leaf that requires grad), but its storage
    and version counter are the input's."""
    for m in (ember, torch):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        for d in (m.int32, m.float32, m.float16, m.float64):
            v = (x * 1).view(d)
            assert v._base is None and not v.requires_grad and v.grad_fn is None
        plain = x.detach()
        v = plain.view(m.int32)
        v.add_(1)  # one ulp up, seen through the float tensor
        assert plain._version == v._version == 1 and plain[0, 0].item() == np.nextafter(
            np.float32(1), np.float32(2))
        x.view(m.int32).zero_()  # (a leaf that requires grad: no view, so no refusal)
        assert x.sum().item() == 0


def test_view_dtype_under_vmap_and_jvp_as_torch():
    xs = rand_array((3, 2, 4))
    got = []
    for m in (ember, torch):
        x = m.tensor(xs)
        outs = [m.func.vmap(lambda v, d=d: v.view(d))(x) for d in (m.int32, m.float16,
                                                                   m.float64)]
        outs.append(m.func.vmap(lambda v, d=m.float16: v.view(d), in_dims=1)(
            x.transpose(0, 1).contiguous()))
        _, tangent = m.func.jvp(lambda v, d=m.int32: v.view(d), (x,), (x,))
        got.append(outs + [tangent])
        with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1 to view Float as "
                                               r"Double \(different element sizes\), but got 3"):
            m.func.vmap(lambda v, d=m.float64: v.view(d), in_dims=2)(
                x.permute(1, 2, 0).contiguous())
    for e, t in zip(*got):
        assert_same(e, t, check_stride=True)


@pytest.mark.parametrize("assign", [
    lambda m, z: setattr(z, "real", m.tensor([1.0, 2.0, 3.0])),
    lambda m, z: setattr(z, "imag", m.tensor([-1.0])),  # (broadcast, as copy_)
    lambda m, z: setattr(z, "real", 5),
    lambda m, z: setattr(z, "imag", m.tensor([1, 2, 3])),  # (an integer source is cast)
    lambda m, z: setattr(z[1:], "imag", m.tensor([7.0, 8.0])),
    lambda m, z: setattr(m.zeros(3), "imag", m.ones(3)),
    lambda m, z: setattr(z, "real", m.ones(2)),
], ids=["real", "imag_broadcast", "real_number", "imag_int", "slice_imag", "imag_of_real",
        "bad_shape"])
def test_assigning_a_part_writes_it_in_place_as_torch(assign):
    outcomes = []
    for m in (ember, torch):
        z = m.tensor([1 + 2j, 3 - 4j, -5 + 6j])
        ptr = z.data_ptr()
        try:
            assign(m, z)
        except RuntimeError as e:
            outcomes.append(("RuntimeError", str(e).split("\n")[0]))
            continue
        assert z.data_ptr() == ptr  # (in place: the tensor keeps its storage)
        outcomes.append((z.tolist(), z._version))
    assert outcomes[0] == outcomes[1]


def test_assigning_the_real_part_of_a_real_tensor_copies_into_it():
    for m in (ember, torch):
        x = m.zeros(2)
        x.real = m.tensor([1.5, -2.0])
        assert x.tolist() == [1.5, -2.0]
