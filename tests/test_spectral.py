"""ember.stft / ember.istft against torch: random signals (1-D and batched), windows shorter
than n_fft, center with each pad mode, normalized, onesided or not, complex signals, the
round trip, gradients, warnings and errors. Values go through the FFT (pocketfft here, MKL or
pocketfft in torch): compared to ~1e-14 in float64 and ~1e-5 in float32."""

import warnings

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, check_grads, check_op

pytestmark = pytest.mark.filterwarnings("ignore:A window was not provided")

SIGNAL = np.random.default_rng(0).standard_normal((2, 300))
HANN32 = torch.hann_window(32, dtype=torch.float64).numpy()
# a window that never vanishes: overlap-add then divides by no near-zero sum at the ends
RAISED64 = torch.hann_window(64, dtype=torch.float64).numpy() + 0.1


def _tol(d: str):
    return (1e-5, 1e-5) if d == "float32" else (1e-12, 1e-12)


@pytest.mark.parametrize("d", ["float32", "float64"])
@pytest.mark.parametrize("kw", [
    dict(n_fft=64), dict(n_fft=64, hop_length=10, center=False),
    dict(n_fft=64, hop_length=16, win_length=40), dict(n_fft=32, pad_mode="constant"),
    dict(n_fft=32, pad_mode="replicate", normalized=True),
    dict(n_fft=32, pad_mode="circular", onesided=False), dict(n_fft=300, center=False),
], ids=str)
def test_stft_matches_torch(kw, d):
    win = kw.get("win_length", kw["n_fft"])
    for signal in (SIGNAL, SIGNAL[0]):
        e = ember.stft(ember.tensor(signal).to(getattr(ember, d)),
                       window=ember.hann_window(win, dtype=getattr(ember, d)),
                       return_complex=True, **kw)
        t = torch.stft(torch.tensor(signal).to(getattr(torch, d)),
                       window=torch.hann_window(win, dtype=getattr(torch, d)),
                       return_complex=True, **kw)
        assert_same(e, t, *_tol(d))


def test_stft_of_complex_signals_windows_and_the_old_real_format():
    z = SIGNAL[0] + 1j * SIGNAL[1]
    assert_same(ember.stft(ember.tensor(z), 32, window=ember.tensor(HANN32)),
                torch.stft(torch.tensor(z), 32, window=torch.tensor(HANN32)), *_tol("float64"))
    cw = np.exp(1j * np.linspace(0, 1, 32)) * np.hanning(32)
    assert_same(ember.stft(ember.tensor(SIGNAL), 32, window=ember.tensor(cw)),
                torch.stft(torch.tensor(SIGNAL), 32, window=torch.tensor(cw)), *_tol("float64"))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        e = ember.stft(ember.tensor(SIGNAL), 32, window=ember.tensor(HANN32),
                       return_complex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.stft(torch.tensor(SIGNAL), 32, window=torch.tensor(HANN32),
                       return_complex=False)
    assert_same(e, t, *_tol("float64"))
    with pytest.warns(UserWarning, match="A window was not provided"):
        ember.stft(ember.tensor(SIGNAL), 32, return_complex=True)


@pytest.mark.parametrize("d", ["float32", "float64"])
@pytest.mark.parametrize("center", [True, False])
def test_istft_matches_torch_and_inverts_stft(center, d):
    def both(m, **kw):
        w = m.tensor(RAISED64).to(getattr(m, d))
        x = m.tensor(SIGNAL).to(getattr(m, d))
        onesided = kw.pop("onesided", None)
        s = m.stft(x, 64, 16, window=w, center=center, onesided=onesided, return_complex=True)
        return m.istft(s, 64, 16, window=w, center=center, onesided=onesided, **kw)

    for kw in ({}, {"length": 250}, {"normalized": False, "onesided": False},
               {"onesided": False, "return_complex": True}):
        e, t = both(ember, **dict(kw)), both(torch, **dict(kw))
        assert_same(e, t, *_tol(d))
    if center:  # the round trip gives the signal back
        np.testing.assert_allclose(both(ember).numpy(), SIGNAL[:, :both(ember).shape[-1]],
                                   rtol=1e-4 if d == "float32" else 1e-12,
                                   atol=1e-4 if d == "float32" else 1e-12)


def test_istft_longer_length_pads_with_zeros_and_warns():
    s = torch.stft(torch.tensor(SIGNAL), 64, 16, window=torch.tensor(RAISED64),
                   return_complex=True)
    with pytest.warns(UserWarning, match="shorter than the length parameter"):
        e = ember.istft(ember.tensor(s.numpy()), 64, 16, window=ember.tensor(RAISED64),
                        length=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.istft(s, 64, 16, window=torch.tensor(RAISED64), length=400)
    assert_same(e, t, *_tol("float64"))
    assert not e[..., 352:].numpy().any()


def test_stft_and_istft_gradients_match_torch():
    w = np.hanning(16)
    check_op(lambda x, win: ember.stft(x, 16, 4, window=win, return_complex=True),
             lambda x, win: torch.stft(x, 16, 4, window=win, return_complex=True),
             SIGNAL[0, :80], w)
    spec = torch.stft(torch.tensor(SIGNAL[0, :80]), 16, 4, window=torch.tensor(w),
                      return_complex=True).numpy()
    check_op(lambda s, win: ember.istft(s, 16, 4, window=win),
             lambda s, win: torch.istft(s, 16, 4, window=win), spec, w + 0.1)
    check_grads(lambda x: ember.view_as_real(ember.stft(x, 8, 2, window=ember.hann_window(
        8, dtype=ember.float64), return_complex=True)), SIGNAL[0, :30])


@pytest.mark.parametrize("call", [
    lambda m, x: m.stft(x, 32),
    lambda m, x: m.stft(x.reshape(2, 3, 100), 16, return_complex=True),
    lambda m, x: m.stft(x[0], 400, center=False, return_complex=True),
    lambda m, x: m.stft(x[0], 16, hop_length=0, return_complex=True),
    lambda m, x: m.stft(x[0], 16, win_length=20, return_complex=True),
    lambda m, x: m.stft(x[0], 16, window=m.ones(10), return_complex=True),
    lambda m, x: m.stft(x[0].long(), 16, return_complex=True),
    lambda m, x: m.stft(x[0], 700, return_complex=True),
    lambda m, x: m.istft(x, 16),
    lambda m, x: m.istft(m.stft(x, 16, window=m.ones(16), return_complex=True), 15),
    lambda m, x: m.istft(m.stft(x, 16, window=m.ones(16), return_complex=True), 16, 20),
    lambda m, x: m.istft(m.stft(x, 16, window=m.ones(16), return_complex=True), 16,
                         window=m.ones(10)),
    lambda m, x: m.istft(m.stft(x, 16, window=m.hann_window(16), return_complex=True), 16,
                         window=m.hann_window(16), center=False),
    lambda m, x: m.istft(m.stft(x, 16, window=m.ones(16), return_complex=True), 16,
                         window=m.ones(16), return_complex=True),
], ids=range(14))
def test_errors_as_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as et:
            call(torch, torch.tensor(SIGNAL).float())
        with pytest.raises(type(et.value)) as ee:
            call(ember, ember.tensor(SIGNAL).float())
    assert str(ee.value) == str(et.value)
