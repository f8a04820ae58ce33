"""clamp's and where's refusals and warnings in PyTorch's words: a float result written into
an integer tensor (clamp names the C++ type for number bounds, the dtype for tensor ones),
where's out= overload taking tensors only, and its once-per-process uint8 warning."""

from __future__ import annotations

import pytest

from fresh_process import with_server

from helpers import same_error, same_message

CALLS = {
    "clamp_": lambda m, x: x.clamp_(0.5),
    "clamp_tensor_bound": lambda m, x: x.clamp_(m.tensor(0.5)),
    "clamp_out": lambda m, x: m.clamp(x, 0.5, out=x),
    "clamp_min_": lambda m, x: x.clamp_min_(0.5),
    "clip_": lambda m, x: x.clip_(0.5, 1.5),
    "add_": lambda m, x: x.add_(0.5),
    "where_out_number_other": lambda m, x: m.where(x > 0, x, 1.5, out=x),
    "where_out_number_input": lambda m, x: m.where(x > 0, 1, x, out=x),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_refusal_in_torchs_words(name):
    def call(m):
        return CALLS[name](m, m.arange(3))

    same_message(call, same_error(call))


def test_uint8_condition_warns_once_per_process_as_torch():
    script = (
        "import warnings, {m} as t\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3):\n"
        "        r = t.where(t.tensor([1, 0], dtype=t.uint8), 1., 0.)\n"
        "print(r.tolist(), [str(x.message).split(' (Triggered')[0] for x in w])\n")
    outs = [with_server(m).run_code(script.format(m=m)).stdout for m in ("torch", "ember")]
    assert outs[0] == outs[1] and "uint8 condition" in outs[0]
