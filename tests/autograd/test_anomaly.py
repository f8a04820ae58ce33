"""Anomaly mode: the forward traceback of the op whose backward produced NaN or failed."""

import warnings

import pytest
import torch

import ember


def nan_in_backward(m):
    x = m.ones(3, dtype=m.float64, requires_grad=True)
    w = (x * 0).log()  # -inf: fine forward, but LogBackward0 computes 0 / 0
    return (w * 0).sum()


def test_detect_anomaly_names_the_op_and_its_forward_line():
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                loss = nan_in_backward(m)
                with pytest.raises(RuntimeError,
                                   match="Function 'LogBackward0' returned nan values in its "
                                         "0th output"):
                    loss.backward()
        texts = [str(w.message) for w in caught]
        assert any("Anomaly Detection has been enabled" in t for t in texts)
        trace = [t for t in texts if t.startswith("Error detected in LogBackward0")]
        assert trace and "nan_in_backward" in trace[0] and "log()" in trace[0]


def test_without_anomaly_mode_nan_passes_silently():
    x = ember.ones(3, dtype=ember.float64, requires_grad=True)
    (x * 0).log().mul(0).sum().backward()
    assert all(v != v for v in x.grad.tolist())  # NaN, no error


def test_check_nan_false_only_keeps_tracebacks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly(check_nan=False):
            nan_in_backward(ember).backward()


def test_set_detect_anomaly_and_query():
    assert not ember.autograd.is_anomaly_enabled()
    with ember.autograd.set_detect_anomaly(True):
        assert ember.autograd.is_anomaly_enabled()
        assert ember.autograd.is_anomaly_check_nan_enabled()
    assert not ember.autograd.is_anomaly_enabled()
    ember.autograd.set_detect_anomaly(True, check_nan=False)
    assert ember.autograd.is_anomaly_enabled() and not ember.autograd.is_anomaly_check_nan_enabled()
    ember.autograd.set_detect_anomaly(False)
    assert not ember.autograd.is_anomaly_enabled()


def test_a_failing_backward_reports_its_forward_traceback():
    class Broken(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = ember.ones(2, requires_grad=True)
    with ember.autograd.set_detect_anomaly(True):
        y = Broken.apply(x)
        with pytest.warns(UserWarning, match="Error detected in BrokenBackward"):
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()


def test_version_error_hint_changes_in_anomaly_mode():
    for m in (ember, torch):
        x = m.ones(3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.set_detect_anomaly(True):
                y = x.exp()
                y.add_(1)
                with pytest.raises(RuntimeError, match="Good luck!"):
                    y.sum().backward()
