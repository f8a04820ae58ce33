"""Conv layers refuse a bad padding string or padding_mode in torch's words, the allowed
values printed as the Python set torch prints: its order follows the hash seed, and ember
builds each set as torch does so the order agrees under every seed."""

import os
import subprocess
import sys

import pytest
import torch

import ember

LAYERS = ["Conv1d", "Conv2d", "Conv3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
          "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
BAD = [{"padding": "causal"}, {"padding": "SAME"}, {"padding": "same", "stride": 2},
       {"padding_mode": "foo"}, {"padding_mode": "zero"}, {"padding_mode": "reflect"},
       {"padding": "bar", "padding_mode": "foo"}, {"groups": 0}, {"groups": 3}]


def _message(L, layer, kwargs):
    args = (2, 3) if layer.startswith("Lazy") else (2, 2, 3)
    if layer.startswith("ConvTranspose") and "padding" in kwargs:
        return None  # torch splits a string into characters here; not compared
    try:
        getattr(L.nn, layer)(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("kwargs", BAD, ids=repr)
@pytest.mark.parametrize("layer", LAYERS)
def test_padding_errors_as_torch(layer, kwargs):
    assert _message(ember, layer, kwargs) == _message(torch, layer, kwargs)


SCRIPT = """
import sys
sys.path.insert(0, {src!r})
import torch, ember
for kw in ({{"padding": "causal"}}, {{"padding_mode": "foo"}}):
    got = []
    for L in (torch, ember):
        try:
            L.nn.Conv2d(2, 2, 3, **kw)
        except ValueError as e:
            got.append(str(e))
    assert got[0] == got[1], got
"""


@pytest.mark.parametrize("seed", ["0", "3", "7"])
def test_set_order_matches_under_other_hash_seeds(seed):
    src = os.path.join(os.path.dirname(ember.__file__), os.pardir)
    env = dict(os.environ, PYTHONHASHSEED=seed)
    run = subprocess.run([sys.executable, "-c", SCRIPT.format(src=os.path.abspath(src))],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
