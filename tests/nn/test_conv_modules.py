"""Conv / ConvTranspose modules against torch (ember/nn/modules/conv.py): `_output_padding`
with torch's signature (a subclass that writes its own forward calls it), the forward's
padding-mode check, and sizes given as any iterable (a NumPy array, a range)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import rand_array, same_message


def _standardized(L):
    """A ConvTranspose2d whose forward standardizes its weight, written as such layers are:
    torch's forward body with its own weight, so it calls `_output_padding` itself."""
    class WSConvTranspose2d(L.nn.ConvTranspose2d):
        def forward(self, x, output_size=None):
            w = self.weight - self.weight.mean(dim=(1, 2, 3), keepdim=True)
            opad = self._output_padding(x, output_size, self.stride, self.padding,
                                        self.kernel_size, 2, self.dilation)
            return L.nn.functional.conv_transpose2d(x, w, self.bias, self.stride, self.padding,
                                                    opad, self.groups, self.dilation)
    return WSConvTranspose2d


@pytest.mark.parametrize("output_size", [None, [8, 8], [1, 3, 7, 8]], ids=str)
def test_a_subclass_forward_calls_output_padding_with_torchs_signature(output_size):
    x = rand_array((1, 2, 4, 4), seed=3)
    outs = []
    for L in (ember, torch):
        L.manual_seed(0)
        m = _standardized(L)(2, 3, 3, stride=2, padding=1)
        outs.append(m(L.tensor(x), output_size=output_size).detach().numpy())
    assert outs[0].shape == outs[1].shape
    # (float32 sums of products in another order than torch's kernels)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_output_padding_returns_what_torch_returns():
    res = []
    for L in (ember, torch):
        m = L.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
        x = L.ones(1, 2, 4, 4)
        res.append((m._output_padding(x, None, [2, 2], [1, 1], [3, 3], 2, [1, 1]),
                    m._output_padding(x, [7, 8], [2, 2], [1, 1], [3, 3], 2),
                    m._output_padding(x[0], (3, 8, 7), [2, 2], [1, 1], [3, 3], 2, [1, 1])))
    assert res[0] == res[1]


def test_output_padding_refusals_in_torchs_words():
    def call(L):
        m = L.nn.ConvTranspose1d(2, 3, 3, stride=2)
        return m._output_padding(L.ones(1, 2, 4), [1, 2], [2], [0], [3], 1, None)
    same_message(call, ValueError)


def test_forward_refuses_a_padding_mode_set_after_construction():
    def call(L):
        m = L.nn.ConvTranspose2d(2, 3, 3)
        m.padding_mode = "reflect"
        return m(L.ones(1, 2, 4, 4))
    same_message(call, ValueError)


@pytest.mark.parametrize("layer, kw", [
    ("Conv2d", dict(kernel_size=np.array([3, 2]))),
    ("ConvTranspose2d", dict(kernel_size=np.array([3, 2]), stride=range(1, 3))),
    ("Conv1d", dict(kernel_size=3, stride=np.int64(2))),
    ("ConvTranspose3d", dict(kernel_size=(2, 2, 1), dilation=range(1, 4))),
], ids=str)
def test_sizes_from_any_iterable(layer, kw):
    nd = int(layer[-2])
    res = []
    for L in (ember, torch):
        L.manual_seed(0)
        m = getattr(L.nn, layer)(2, 3, **kw)
        res.append((repr(m), tuple(m(L.ones(*(1, 2) + (6,) * nd)).shape)))
    assert res[0] == res[1]
