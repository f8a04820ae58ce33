"""nn.utils.parametrize and nn.utils.parametrizations against torch: layout, state_dict keys,
values, gradients, caching, right_inverse, removal and errors."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same


def _modules(L):
    class Symmetric(L.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()

    class Double(L.nn.Module):
        def forward(self, x):
            return 2 * x

        def right_inverse(self, a):
            return a / 2

    class Split(L.nn.Module):  # two originals: weight = a + b
        def forward(self, a, b):
            return a + b

        def right_inverse(self, w):
            return w * 0.25, w * 0.75

    class NoInverse(L.nn.Module):
        def forward(self, x):
            return x.exp()

    return Symmetric, Double, Split, NoInverse


def _both(build):
    torch.manual_seed(0)
    t = build(torch)
    ember.manual_seed(0)
    return build(ember), t


def _same_module_state(e, t):
    sd_e, sd_t = e.state_dict(), t.state_dict()
    assert list(sd_e) == list(sd_t)
    for k in sd_t:
        assert_same(sd_e[k], sd_t[k])


def test_register_chain_and_layout():
    def build(L):
        sym, double, _, _ = _modules(L)
        m = L.nn.Linear(3, 3)
        L.nn.utils.parametrize.register_parametrization(m, "weight", sym())
        L.nn.utils.parametrize.register_parametrization(m, "weight", double())
        return m

    e, t = _both(build)
    assert repr(e) == repr(t)
    assert type(e).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert isinstance(e, ember.nn.Linear)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    _same_module_state(e, t)
    assert_same(e.weight, t.weight)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    e(ember.tensor(x)).pow(2).sum().backward()
    t(torch.tensor(x)).pow(2).sum().backward()
    assert_same(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    assert ember.nn.utils.parametrize.type_before_parametrizations(e) is ember.nn.Linear


def test_assignment_runs_right_inverse_and_keeps_the_parameter():
    def build(L):
        sym, double, _, _ = _modules(L)
        m = L.nn.Linear(3, 3)
        L.nn.utils.parametrize.register_parametrization(m, "weight", sym())
        L.nn.utils.parametrize.register_parametrization(m, "weight", double())
        original = m.parametrizations.weight.original
        m.weight = L.arange(9.0).reshape(3, 3)
        assert m.parametrizations.weight.original is original
        return m

    e, t = _both(build)
    assert_same(e.parametrizations.weight.original, t.parametrizations.weight.original)
    assert_same(e.weight, t.weight)


def test_several_originals_and_removal():
    def build(L):
        _, _, split, _ = _modules(L)
        m = L.nn.Linear(2, 3)
        L.nn.utils.parametrize.register_parametrization(m, "weight", split())
        return m

    e, t = _both(build)
    _same_module_state(e, t)
    assert "parametrizations.weight.original1" in e.state_dict()
    for m, P in ((e, ember.nn.utils.parametrize), (t, torch.nn.utils.parametrize)):
        with pytest.raises(ValueError, match="Cannot leave unparametrized"):
            P.remove_parametrizations(m, "weight", leave_parametrized=False)
        P.remove_parametrizations(m, "weight")
    assert type(e) is ember.nn.Linear and type(t) is torch.nn.Linear
    _same_module_state(e, t)
    assert isinstance(e.weight, ember.nn.Parameter)


def test_remove_leaves_original_or_parametrized_value():
    for leave in (True, False):
        def build(L, leave=leave):
            sym, _, _, _ = _modules(L)
            m = L.nn.Linear(3, 3)
            L.nn.utils.parametrize.register_parametrization(m, "weight", sym())
            m.parametrizations.weight.original.data.add_(1)
            L.nn.utils.parametrize.remove_parametrizations(m, "weight", leave)
            return m

        e, t = _both(build)
        assert repr(e) == repr(t)
        _same_module_state(e, t)


def test_cached_returns_one_tensor():
    sym, _, _, _ = _modules(ember)
    m = ember.nn.Linear(3, 3)
    P = ember.nn.utils.parametrize
    P.register_parametrization(m, "weight", sym())
    assert m.weight is not m.weight
    with P.cached():
        w = m.weight
        assert m.weight is w
        with P.cached():
            assert m.weight is w
        assert m.weight is w
    assert m.weight is not w


def test_buffers_can_be_parametrized():
    def build(L):
        _, double, _, _ = _modules(L)
        m = L.nn.BatchNorm1d(3)
        L.nn.utils.parametrize.register_parametrization(m, "running_var", double())
        return m

    e, t = _both(build)
    _same_module_state(e, t)
    assert_same(e.running_var, t.running_var)


@pytest.mark.parametrize("case", ["missing", "shape", "dtype", "no_inverse_assign",
                                  "not_parametrized"])
def test_errors_match_torch(case):
    def call(L):
        sym, double, _, no_inverse = _modules(L)
        P = L.nn.utils.parametrize
        m = L.nn.Linear(3, 2)

        class Flat(L.nn.Module):
            def forward(self, x):
                return x.flatten()

        class ToDouble(L.nn.Module):
            def forward(self, x):
                return x.double()

        if case == "missing":
            P.register_parametrization(m, "nope", double())
        elif case == "shape":
            P.register_parametrization(m, "weight", Flat())
        elif case == "dtype":
            P.register_parametrization(m, "weight", ToDouble())
        elif case == "no_inverse_assign":
            P.register_parametrization(m, "weight", no_inverse())
            m.weight = L.zeros(2, 3)
        else:
            P.remove_parametrizations(m, "weight")

    errors = []
    for L in (torch, ember):
        with pytest.raises(Exception) as info:
            call(L)
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1])
    assert str(errors[0]).split("\n")[0][:40] == str(errors[1]).split("\n")[0][:40] or \
        case in ("missing", "not_parametrized")


def test_unsafe_allows_shape_change():
    class Flat(ember.nn.Module):
        def forward(self, x):
            return x.flatten()

    m = ember.nn.Linear(3, 2)
    ember.nn.utils.parametrize.register_parametrization(m, "weight", Flat(), unsafe=True)
    assert tuple(m.weight.shape) == (6,)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    e, t = _both(lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Linear(4, 3), dim=dim))
    assert repr(e) == repr(t)
    _same_module_state(e, t)
    assert_same(e.weight, t.weight)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    e(ember.tensor(x)).square().sum().backward()
    t(torch.tensor(x)).square().sum().backward()
    for i in (0, 1):
        assert_same(getattr(e.parametrizations.weight, f"original{i}").grad,
                    getattr(t.parametrizations.weight, f"original{i}").grad)


def test_weight_norm_loads_legacy_keys():
    with pytest.warns(FutureWarning):
        legacy = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in legacy.state_dict().items()}
    m = ember.nn.utils.parametrizations.weight_norm(ember.nn.Linear(3, 2))
    m.load_state_dict(sd)
    assert_same(m.weight, legacy.weight)


@pytest.mark.parametrize("make", [lambda L: L.nn.Linear(5, 3),
                                  lambda L: L.nn.Conv2d(2, 4, 3),
                                  lambda L: L.nn.ConvTranspose2d(2, 4, 3)])
def test_spectral_norm_matches_torch(make):
    e, t = _both(lambda L: L.nn.utils.parametrizations.spectral_norm(make(L)))
    _same_module_state(e, t)  # the power-iteration vectors come from the same random draws
    assert_same(e.weight, t.weight, rtol=1e-5, atol=1e-6)
    e.eval()
    t.eval()
    assert_same(e.weight, t.weight, rtol=1e-5, atol=1e-6)
    with pytest.raises(IndexError):
        ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(2, 2), dim=3)


@pytest.mark.parametrize("shape, kw", [
    ((4, 4), {}), ((6, 3), {}), ((3, 6), {}), ((4, 4), {"orthogonal_map": "cayley"}),
    ((5, 3), {"orthogonal_map": "matrix_exp"}), ((4, 4), {"orthogonal_map": "householder"}),
    ((3, 3), {"use_trivialization": False}),
])
def test_orthogonal_matches_torch(shape, kw):
    def build(L):
        m = L.nn.Linear(shape[1], shape[0])
        return L.nn.utils.parametrizations.orthogonal(m, **kw)

    e, t = _both(build)
    assert repr(e) == repr(t)
    assert sorted(e.state_dict()) == sorted(t.state_dict())
    assert_same(e.weight, t.weight, rtol=1e-5, atol=1e-6)
    w = e.weight.detach().numpy()
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)
    x = np.linspace(-1, 1, 2 * shape[1], dtype=np.float32).reshape(2, shape[1])
    e(ember.tensor(x)).square().sum().backward()
    t(torch.tensor(x)).square().sum().backward()
    assert_same(e.parametrizations.weight.original.grad,
                t.parametrizations.weight.original.grad, rtol=1e-4, atol=1e-5)
    if kw.get("use_trivialization", True):
        with ember.no_grad():
            e.weight = ember.eye(*shape)
        with torch.no_grad():
            t.weight = torch.eye(*shape)
        assert_same(e.weight, t.weight, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["first_dtype", "first_shape", "stacked_dtype", "stacked_shape",
                                  "inverse_dtype", "inverse_shape"])
def test_check_messages_match_torch_word_for_word(case):
    """The shape/dtype checks at registration print torch's whole message: the first
    registration names "unparametrized dtype:", a stacked one "module.weight.dtype:"."""
    def call(L):
        P = L.nn.utils.parametrize

        class Change(L.nn.Module):
            def forward(self, x):
                return x.double() if case.endswith("dtype") else x[:1]

        class BadInverse(L.nn.Module):
            def forward(self, x):
                return x

            def right_inverse(self, x):
                return x.double() if case.endswith("dtype") else x[:1]

        class Same(L.nn.Module):
            def forward(self, x):
                return x

        m = L.nn.Linear(3, 2)
        if case.startswith("stacked"):
            P.register_parametrization(m, "weight", Same())
        P.register_parametrization(m, "weight",
                                   BadInverse() if case.startswith("inverse") else Change())

    messages = []
    for L in (torch, ember):
        with pytest.raises(ValueError) as info:
            call(L)
        messages.append(str(info.value))
    # (imported as `ember`, dtypes and sizes print as ember.float64 / ember.Size)
    assert messages[0] == messages[1].replace("ember.", "torch.")


def test_setting_the_original_bumps_its_version_as_set_does():
    """torch moves values into `original` with `Tensor.set_` (at registration, even when
    right_inverse is the identity, on assignment and on removal), so a graph that saved the
    old value refuses to backward instead of silently using the new one."""
    def run(L):
        P = L.nn.utils.parametrize

        class Square(L.nn.Module):
            def forward(self, x):
                return x * x

            def right_inverse(self, x):
                return x.sqrt()

        versions = []
        plain = L.nn.Linear(2, 2)
        P.register_parametrization(plain, "weight", L.nn.Identity())
        versions.append(plain.parametrizations.weight.original._version)
        m = L.nn.Linear(2, 2)
        P.register_parametrization(m, "weight", Square())
        original = m.parametrizations.weight.original
        versions.append(original._version)
        loss = m.weight.sum()
        m.weight = L.ones(2, 2)
        versions.append(original._version)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            loss.backward()
        P.remove_parametrizations(m, "weight", leave_parametrized=True)
        versions.append(m.weight._version)
        assert m.weight is original
        return versions, str(info.value)

    (tv, tmsg), (ev, emsg) = run(torch), run(ember)
    assert tv == ev == [2, 2, 3, 4]
    assert tmsg == emsg


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (2, 3, 3)])
def test_householder_without_trivialization_inverts_through_geqrf(shape):
    """Householder with use_trivialization=False stores the reflectors of the weight's QR
    (geqrf) with diag(R)'s signs on the diagonal, at registration and on assignment, so the
    weight is orthogonal at once (not the raw weight with columns zeroed by `.int()`)."""
    def build(L):
        m = L.nn.Module()
        m.w = L.nn.Parameter(L.randn(*shape))
        return L.nn.utils.parametrizations.orthogonal(m, "w", orthogonal_map="householder",
                                                      use_trivialization=False)

    e, t = _both(build)
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()] == []
    # (geqrf's LAPACK reflectors, then products of them: float32 rounding, not the vector path)
    assert_same(e.parametrizations.w.original, t.parametrizations.w.original, rtol=1e-5,
                atol=1e-6)
    assert_same(e.w, t.w, rtol=1e-5, atol=1e-6)
    n, k = shape[-2:]
    q = np.linalg.qr(np.random.default_rng(0).standard_normal(shape[:-2] + (max(n, k),) * 2))[0]
    q = q[..., :n, :k].astype(np.float32)
    with ember.no_grad():
        e.w = ember.tensor(q)
    with torch.no_grad():
        t.w = torch.tensor(q)
    assert_same(e.w, t.w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(e.w.detach().numpy(), q, atol=1e-5)


def test_orthogonal_keeps_the_map_as_torchs_enum():
    for L in (torch, ember):
        names = []
        for shape, kw in [((3, 3), {}), ((2, 5), {}), ((3, 3), {"orthogonal_map": "cayley"})]:
            m = L.nn.utils.parametrizations.orthogonal(L.nn.Linear(shape[1], shape[0]), **kw)
            p = m.parametrizations.weight[0]
            names.append((str(p.orthogonal_map), p.orthogonal_map.name, p.orthogonal_map.value))
        assert names == [("_OrthMaps.matrix_exp", "matrix_exp", 1),
                         ("_OrthMaps.householder", "householder", 3),
                         ("_OrthMaps.cayley", "cayley", 2)]
