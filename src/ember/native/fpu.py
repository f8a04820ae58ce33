"""The calling thread's floating-point control (csrc/fpu.c): flush denormals to zero, for
`set_flush_denormal`. Built on first use, like every native unit; without a compiler the
switch is absent and the answer is False."""

from __future__ import annotations

import os

from . import kernels, toolchain


def set_flush_denormal(on: bool) -> bool:
    """Set (or clear) flush-to-zero and denormals-are-zero for this thread; whether it could."""
    if kernels.mode() == "numpy":  # (EMBER_KERNELS=numpy: no compiled code at all)
        return False
    with open(os.path.join(toolchain.CSRC, "fpu.c")) as f:
        lib = toolchain.try_build("fpu", f.read())
    return lib is not None and bool(lib.ember_set_flush_denormal(int(on)))
