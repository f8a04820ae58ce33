"""A kernel family's libraries, one per dtype: a float32 program builds only the float32
one, the float64 one comes with the first float64 call, and a float64 library that
cannot be built leaves that dtype on the NumPy kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import ember
from ember.native import toolchain

SRC = os.path.join(os.path.dirname(ember.__file__), os.pardir)

pytestmark = pytest.mark.skipif(toolchain.compiler() is None, reason="no C compiler here")

CHILD = textwrap.dedent("""
    import json, os, sys, warnings
    import numpy as np
    import ember
    from ember.native import kernels, toolchain
    from ember.ops.softmax import softmax_p
    if sys.argv[1] == "no-f64":  # the float64 build fails as a missing compiler would
        real = toolchain.try_build
        toolchain.try_build = lambda name, src, **kw: (
            None if name.endswith("-f64") else real(name, src, **kw))
    folder = os.environ["EMBER_CACHE_DIR"]
    built = lambda: sorted(f.rsplit("-", 1)[0] for f in os.listdir(folder) if f.endswith(".so"))
    x = np.random.default_rng(0).standard_normal((8, 300))
    numpy_k = kernels.twins(softmax_p)[0]
    out = {}
    y32 = ember.softmax(ember.tensor(x.astype(np.float32)), 1).numpy()
    out["after_f32"] = built()
    out["f32_diff"] = float(np.abs(y32 - numpy_k(x.astype(np.float32), dim=1, log=False)).max())
    with warnings.catch_warnings(record=True):
        y64 = ember.softmax(ember.tensor(x), 1).numpy()
    out["after_f64"] = built()
    out["f64_same_as_numpy"] = bool(np.array_equal(y64, numpy_k(x, dim=1, log=False)))
    out["f64_diff"] = float(np.abs(y64 - numpy_k(x, dim=1, log=False)).max())
    print(json.dumps(out))
""")


def _run(tmp_path, mode: str) -> dict:
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), PYTHONPATH=os.path.abspath(SRC))
    env.pop("EMBER_KERNELS", None)
    res = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_float32_program_builds_only_the_float32_library(tmp_path):
    out = _run(tmp_path, "both")
    assert out["after_f32"] == ["runtime", "softmax-f32"]
    assert out["after_f64"] == ["runtime", "softmax-f32", "softmax-f64"]
    # the native kernels sum in another order than NumPy's: a few ulps (see test_softmax)
    assert out["f32_diff"] < 1e-6 and out["f64_diff"] < 1e-14


def test_float64_library_that_fails_to_build_leaves_float64_on_numpy(tmp_path):
    out = _run(tmp_path, "no-f64")
    assert out["after_f64"] == ["runtime", "softmax-f32"]
    assert out["f64_same_as_numpy"]
