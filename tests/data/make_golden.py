"""Write the golden checkpoint files in tests/data/ with real PyTorch (run by hand).

    .venv/bin/python tests/data/make_golden.py

Each `<name>.pt` was written by `torch.save`; `<name>.npz` holds what ember must
read from it (raw bits of every tensor, plus its shape / stride / offset and which
tensors share storage), so tests/test_serialization.py checks the load path without
importing torch. Values are deterministic; regenerate only when the format changes.
"""

from __future__ import annotations

import collections
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
    "float64", "complex64", "complex128", "uint16", "uint32", "uint64", "float8_e4m3fn",
    "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
]


def pattern(dtype: torch.dtype, n: int = 6) -> torch.Tensor:
    base = torch.arange(n, dtype=torch.float64) * 0.75 - 1.5
    if dtype == torch.bool:
        return base > 0
    if dtype.is_complex:
        return torch.complex(base, -base).to(dtype)
    if not dtype.is_floating_point:
        return torch.arange(n, dtype=torch.int64).mul(37).sub(50 if dtype.is_signed else 0).to(
            dtype)
    if dtype == torch.float8_e8m0fnu:
        return torch.tensor([0.25, 0.5, 1.0, 2.0, 4.0, 8.0][:n]).to(dtype)
    return base.to(dtype)


def bits(t: torch.Tensor) -> np.ndarray:
    """The tensor's values as raw bytes, row-major (what ember's .numpy() must hold)."""
    c = t.detach().contiguous().reshape(-1)
    return np.frombuffer(c.view(torch.uint8).numpy().tobytes() if c.numel() else b"",
                         np.uint8).copy()


def record(out: dict, name: str, t: torch.Tensor) -> None:
    out[f"{name}.bits"] = bits(t)
    out[f"{name}.meta"] = np.array([*t.shape, -1, *t.stride(), -1, t.storage_offset()],
                                   np.int64)
    out[f"{name}.ptr"] = np.array([t.untyped_storage().data_ptr()], np.int64)


def save(name: str, obj, tensors: dict, **kw) -> None:
    torch.save(obj, os.path.join(HERE, f"{name}.pt"), **kw)
    expected: dict = {}
    for k, t in tensors.items():
        record(expected, k, t)
    np.savez_compressed(os.path.join(HERE, f"{name}.npz"), **expected)


def main() -> None:
    torch.manual_seed(0)
    dtypes = {d: pattern(getattr(torch, d)) for d in DTYPES}
    save("dtypes", dtypes, dtypes)

    w = torch.randn(4, 6)
    views = {"w": w, "wt": w.t(), "slice": w[1:3, 2:], "col": w[:, 1], "expand":
             torch.ones(3)[:1].expand(5), "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
             "bf16_view": torch.randn(3, 5).to(torch.bfloat16)[:, ::2],
             "tied": w}
    save("views", views, views)

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                torch.nn.Linear(4, 2))
    model(torch.randn(5, 3))  # moves the BatchNorm running stats
    sd = model.state_dict()
    save("state_dict", sd, dict(sd))

    model.zero_grad()
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(5, 3)).square().mean().backward()
        opt.step()
    osd = opt.state_dict()
    flat = {f"{i}.{k}": v for i, s in osd["state"].items() for k, v in s.items()}
    save("adamw", osd, flat)

    legacy = collections.OrderedDict(a=torch.arange(5.0), b=torch.arange(6).reshape(2, 3).t())
    save("legacy", legacy, dict(legacy), _use_new_zipfile_serialization=False)


if __name__ == "__main__":
    main()
