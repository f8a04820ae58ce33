"""Compare PyTorch's public API with ember's and write docs/api-coverage.md.

    python tools/api_coverage.py --usage PATH/api-usage.md [--out docs/api-coverage.md]

Run it with the dev environment (it imports torch, the oracle; ember never does) and
ember's source first on the path. It walks `dir()` of torch, torch.Tensor, torch.nn,
torch.nn.functional, torch.linalg, torch.special, torch.fft and torch.distributions,
looks each public name up in the matching ember namespace, and ranks the APIs that real
programs use by the usage study (api-usage.md: one table row per API, most used first).
Each name is present, missing, or deliberately missing with the reason (the `DELIBERATE`
rules below). tests/test_api_coverage.py checks that what the table calls present exists.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import warnings
from pathlib import Path

NAMESPACES = ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.linalg",
              "torch.special", "torch.fft", "torch.distributions"]

# (pattern on the dotted name, reason): first match wins. Names matching none are "missing".
DELIBERATE = [
    (r"sparse_bs[rc]|to_sparse_bs[rc]", "block-sparse layouts (BSR / BSC): not built; COO, "
     "CSR and CSC are"),
    (r"sparse_resize|resize_as_sparse", "resizing a sparse tensor in place: not built"),
    (r"grid_sampler|affine_grid_generator", "ATen's grid-sampling entry points "
     "(nn.functional.grid_sample and affine_grid are present)"),
    (r"_notes$|common_args$|multi_dim_common$|\.torch$",
     "docstring fragments and module re-imports: not API"),
    (r"quantiz|\.q_|dequantize|int_repr|qscheme|fake_quant|fbgemm|\.quint|\.qint|\.per_channel"
     r"|\.per_tensor|QUInt|QInt|is_quantized",
     "quantized tensors: out of scope (ember computes in floating point)"),
    (r"cudnn|miopen|mkldnn|xnnpack|vulkan|\.mps|\.ipu|\.hpu|\.mtia|\.maia|\.xla|nnpack|onednn"
     r"|\.xpu|mkl|\.cuda\b|cuda_|_cuda|pin_memory|is_pinned|record_stream",
     "a device or vendor kernel library that ember does not have (its CPU path is NumPy)"),
    (r"_copy$", "view-copy variants (functionalization ops for compilers, not programs)"),
    (r"\.nested|nested_tensor|to_padded_tensor", "nested tensors: out of scope"),
    (r"\.(names|rename|rename_|refine_names|align_to|align_as|has_names)$",
     "named tensors: deprecated in PyTorch"),
    (r"\.(jit|_jit|export|_dynamo|_inductor|compiler|onnx|package|ao|mtia"
     r"|_library|_higher_order_ops|_prims|_refs|_decomp|_subclasses|_functorch"
     r"|sym_|Sym|_sym)", "compiler, export and tracing internals"),
    (r"\.(lstsq|symeig|eig|solve|lu|matrix_rank|reinforce|volatile)$",
     "removed or deprecated in PyTorch 2 (raise there too)"),
    (r"\.(float8_\w+|float4_\w+|complex32|chalf|uint(1|2|3|4|5|6|7|16|32|64)|int[1-7]|bits\w+)$",
     "dtypes ember does not have (float8/float4, sub-byte, wide unsigned, complex32)"),
]

# TorchScript and C++ runtime classes (torch._C), and what a module merely imported
# (`torch.os`, `torch.nn.functional.np`, typing names): not API a program calls.
_NOT_API_MODULES = ("torch._C", "torch.jit", "torch._jit_internal", "typing", "collections")


def _not_api(obj) -> bool:
    import types

    if isinstance(obj, types.ModuleType):
        return not obj.__name__.startswith("torch")
    module = getattr(obj, "__module__", None) or ""
    if isinstance(obj, type):
        return module.startswith(_NOT_API_MODULES)
    return module.startswith(("typing", "collections"))


def _load(path: str):
    """The object at a dotted path (`torch.nn.functional`, `ember.Tensor`), importing modules."""
    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[:i + 1]))
    return obj


def ember_has(torch_path: str) -> bool:
    """Whether ember provides `torch_path` (a dotted torch name)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _load("ember" + torch_path[len("torch"):])
        except Exception:  # noqa: BLE001 - absent, however ember says so
            return False
    return True


_PYBIND = "TorchScript and C++ runtime classes (pybind11 bindings of torch._C)"


def _reason(path: str, obj=None) -> str | None:
    if type(obj).__name__ == "pybind11_type" or type(type(obj)).__name__ == "pybind11_type":
        return _PYBIND
    for pattern, why in DELIBERATE:
        if re.search(pattern, path):
            return why
    return None


def _public(ns: str) -> list[str]:
    """Public names of a torch namespace that a program could call or use."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = _load(ns)
        names = [n for n in dir(obj) if not n.startswith("_") and n != "TYPE_CHECKING"]
        return sorted(n for n in names if not _not_api(getattr(obj, n, None)))


def read_usage(path: Path) -> list[tuple[int, str, str, int]]:
    """(rank, API as the study names it, kind, programs) for every row of api-usage.md."""
    rows = []
    for line in path.read_text().splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|\s*(\d+)\s*\|", line)
        if m:
            rows.append((int(m[1]), m[2], m[3], int(m[4])))
    return rows


def usage_path(api: str) -> str | None:
    """The study's name (`Tensor.view`, `nn.Module.eval`, `Tensor.__add__ (+)`) as a dotted
    torch path, or None for what is not a name (subclassing, protocol variants)."""
    name = api.split(" ")[0]
    if name.startswith(("Tensor.", "nn.", "optim.")):
        name = "torch." + name
    if name.startswith("autograd"):  # `autograd ctx.saved_tensors`
        return "torch.autograd.function.FunctionCtx." + api.split(".")[-1]
    return name if name.startswith("torch") else None


# Attributes the study saw on instances (set in __init__), probed on one instance each.
_INSTANCES = {
    "torch.optim.Optimizer": lambda L: L.optim.SGD([L.zeros(1, requires_grad=True)], lr=0.1),
    "torch.nn.Module": lambda L: L.nn.Linear(1, 1),
}


def instance_has(torch_path: str) -> bool:
    """Whether an ember instance of the class in `torch_path` has its last attribute."""
    owner, _, attr = torch_path.rpartition(".")
    make = _INSTANCES.get(owner)
    return make is not None and hasattr(make(importlib.import_module("ember")), attr)


def build(usage: Path) -> str:
    import torch

    status: dict[str, str] = {}
    sections = []
    for ns in NAMESPACES:
        present, missing, deliberate = [], [], []
        space = _load(ns)
        for n in _public(ns):
            path = f"{ns}.{n}"
            if ember_has(path):
                present.append(n)
            elif _reason(path, getattr(space, n, None)):
                deliberate.append(n)
            else:
                missing.append(n)
        sections.append((ns, present, missing, deliberate))
        for n in present:
            status[f"{ns}.{n}"] = "present"
    rows = read_usage(usage)
    out = [
        "# API coverage: ember against PyTorch " + torch.__version__.split("+")[0],
        "",
        "Generated by `python tools/api_coverage.py --usage api-usage.md` (see the script's",
        "docstring); do not edit by hand. A name is *present* when ember has it at the same",
        "path, *deliberately missing* when one of the script's `DELIBERATE` rules gives a",
        "reason, and *missing* otherwise. `tests/test_api_coverage.py` checks that everything",
        "called present here exists.",
        "",
        "## Summary",
        "",
        "| namespace | public names | present | missing | deliberately missing |",
        "|---|---|---|---|---|",
    ]
    for ns, p, m, d in sections:
        out.append(f"| `{ns}` | {len(p) + len(m) + len(d)} | {len(p)} | {len(m)} | {len(d)} |")
    out += ["", "## The APIs real programs use, by rank", "",
            f"All {len(rows)} rows of the usage study (33 programs, 5 course texts), in its "
            "order.", "",
            "| # | API | kind | programs | status |", "|---|---|---|---|---|"]
    for rank, api, kind, progs in rows:
        path = usage_path(api)
        if path is None:
            st = "present (a use, not a name)" if kind == "subclassing" else "n/a"
        elif ember_has(path):
            st = "present"
        elif instance_has(path):
            st = "present (an instance attribute)"
        else:
            st = "deliberately missing: " + _reason(path) if _reason(path) else "**missing**"
        out.append(f"| {rank} | `{api}` | {kind} | {progs} | {st} |")
    out += ["", "## Missing, by namespace", "",
            "Names PyTorch has and ember lacks, with no reason given yet: the to-do list.", ""]
    for ns, _, m, _ in sections:
        out += [f"### `{ns}` ({len(m)})", "", ", ".join(f"`{n}`" for n in m) or "(none)", ""]
    out += ["## Deliberately missing", ""]
    for why in [_PYBIND] + [why for _, why in DELIBERATE]:
        names = [f"{ns}.{n}" for ns, _, _, d in sections for n in d
                 if _reason(f"{ns}.{n}", getattr(_load(ns), n, None)) == why]
        out += [f"### {why} ({len(names)})", "", ", ".join(f"`{n}`" for n in names) or "(none)",
                ""]
    out += ["## Present, by namespace", ""]
    for ns, p, _, _ in sections:
        out += [f"<details><summary><code>{ns}</code> ({len(p)})</summary>", "",
                ", ".join(f"`{n}`" for n in p), "", "</details>", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--usage", type=Path, required=True, help="the usage study, api-usage.md")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parent.parent / "docs" / "api-coverage.md")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the file differs from a fresh run, instead of writing it")
    args = ap.parse_args(argv)
    text = build(args.usage) + "\n"
    if args.check:
        same = args.out.exists() and args.out.read_text() == text
        print("up to date" if same else f"{args.out} is out of date: regenerate it")
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
