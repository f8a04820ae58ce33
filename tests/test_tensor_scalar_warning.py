"""Tensor.__float__ / __complex__ of a tensor that requires grad: torch 2.13 warns once per
process, only from float() and complex(), only while grad mode is on. Each case runs in a
fresh process (the warning is once per process; tests/fresh_process.py) under torch and
under ember."""

import pytest

from fresh_process import with_server

PROGRAM = """
import operator, warnings, {lib} as torch
a = torch.tensor(1.5, requires_grad=True)
t = {{"leaf": a, "nonleaf": a * 2, "vector": torch.tensor([2.5], requires_grad=True)}}["{which}"]
conv = {{"float": float, "int": int, "item": lambda t: t.item(), "bool": bool,
         "complex": complex, "float twice": lambda t: (float(t), float(t)),
         "float then complex": lambda t: (float(t), complex(t))}}["{conv}"]
mode = {{"grad": torch.enable_grad, "no_grad": torch.no_grad,
         "inference": torch.inference_mode}}["{mode}"]
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    with mode():
        conv(t)
print([(x.category.__name__, str(x.message).split(" (Triggered")[0]) for x in w])
"""


def run(lib, **case):
    out = with_server(lib).run_code(PROGRAM.format(lib=lib, **case))
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("conv", ["float", "int", "item", "bool", "complex", "float twice",
                                  "float then complex"])
@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference"])
def test_warns_as_torch(conv, mode):
    for which in ("leaf", "nonleaf") if conv in ("float", "complex") else ("leaf",):
        case = dict(conv=conv, mode=mode, which=which)
        assert run("ember", **case) == run("torch", **case)
