"""Warnings of resampling and filtering calls, as PyTorch gives them: the deprecated
`upsample*` functions on every call, at the user's line; 'same' padding that needs an
asymmetric pad (an even kernel at odd dilation) once a process (TORCH_WARN_ONCE). Each
script runs under torch and ember in a fresh process; the stderr texts are compared."""

import pytest

from test_user_warnings import _stderr

SCRIPTS = {
    "upsample_deprecated": """
        F = torch.nn.functional
        x = torch.ones(1, 1, 2, 2)
        for _ in range(2):
            F.upsample(x, scale_factor=2)
            F.upsample_nearest(x, size=3)
            F.upsample_bilinear(x, scale_factor=2)
            torch.nn.UpsamplingBilinear2d(scale_factor=2)(x)
        """,
    "same_padding_even_kernel_once": """
        F = torch.nn.functional
        x = torch.ones(1, 1, 6, 6)
        F.conv2d(x, torch.ones(1, 1, 3, 3), padding="same")
        F.conv2d(x, torch.ones(1, 1, 4, 4), padding="same", dilation=2)
        print("symmetric: no warning yet")
        for _ in range(2):
            F.conv2d(x, torch.ones(1, 1, 4, 3), padding="same")
            F.conv1d(x[0, :, 0], torch.ones(1, 1, 2), padding="same")
        """,
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_warning_line_and_count(name, tmp_path):
    expected = _stderr(SCRIPTS[name], tmp_path=tmp_path)
    assert "UserWarning" in expected
    assert _stderr(SCRIPTS[name], "-m", "ember.run", tmp_path=tmp_path) == expected
