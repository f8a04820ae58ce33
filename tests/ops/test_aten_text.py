"""A tensor inside a PyTorch C++ error message is printed by ATen's `operator<<`, not by
Python's repr: meshgrid's rank check shows it. Each case compares the whole message with
torch's, so the column width, number style (integer, fixed, scaled, scientific), the
"Columns a to b" split at 80 characters, the "(i,j,.,.) = " slices and the legacy type
name all have to agree."""

import math

import pytest

from helpers import same_message

CASES = {
    "integral floats": lambda L: L.tensor([[4.0, 6.0, 30.0, 28.0], [34.0, 30.0, 60.0, 62.0]]),
    "long": lambda L: L.arange(6).view(2, 3),
    "fixed": lambda L: L.tensor([[0.5, 1.25], [-50.5, 3.0]]),
    "scaled down": lambda L: L.tensor([[0.001, 0.002]]),
    "scaled up": lambda L: L.arange(2.0).view(2, 1) * 1e6 + 0.5,
    "scientific": lambda L: L.tensor([[1e-5, 3.0]]),
    "scientific wide exponent": lambda L: L.tensor([[1e-120, 1.0]], dtype=L.float64),
    "integers past 9 digits": lambda L: L.tensor([[-1e12, 5.0]]),
    "g style": lambda L: L.tensor([[12345678.0, 1.0], [1.5e6, 2e5]]),
    "negative zero": lambda L: L.tensor([[-0.0, 1.0]]),
    "non-finite": lambda L: L.tensor([[math.nan, math.inf], [-math.inf, 2.5]]),
    "all nan": lambda L: L.tensor([[math.nan, math.nan]]),
    "columns": lambda L: L.arange(40.0).view(2, 20) / 3,
    "integer columns": lambda L: L.arange(30).view(1, 30),
    "empty": lambda L: L.zeros(2, 0),
    "3-d": lambda L: L.arange(24).view(2, 3, 4),
    "3-d scaled": lambda L: L.tensor([[1.5e-3, 1e-3]]) * L.ones(3, 1, 1),
    "4-d, first index fastest": lambda L: L.arange(8).view(2, 2, 1, 2),
    "3-d columns": lambda L: L.arange(100.0).view(1, 2, 50) / 7,
}
DTYPES = ["float64", "float16", "bfloat16", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_meshgrid_prints_the_tensor_as_aten_does(name):
    same_message(lambda L: L.meshgrid(CASES[name](L), indexing="ij"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_names_legacy_or_dispatch_key(dtype):
    # float/int types keep `torch.FloatTensor`-style names; bool and bfloat16 print `CPU...Type`
    same_message(lambda L: L.meshgrid(L.ones(1, 2, dtype=getattr(L, dtype)), indexing="xy"))


def test_dtypes_are_checked_before_ranks():
    msg = same_message(lambda L: L.meshgrid(L.zeros(2, 2), L.zeros(2, dtype=L.long),
                                            indexing="ij"))
    assert msg == "meshgrid expects all tensors to have the same dtype"


def test_zero_dim_bool_in_istft_envelope_check():
    # a zero window leaves a zero overlap-add envelope: ATen prints the failed 0-d test
    def call(L):
        spec = L.stft(L.ones(64), 16, window=L.ones(16), return_complex=True)
        return L.istft(spec, 16, window=L.zeros(16))

    assert same_message(call).endswith("window overlap add min: 1\n[ CPUBoolType{} ]")
