"""Imports point down: the core sits below the op layer and autograd, and nothing below
reaches up. Every `import` in src/ember (at module level or inside a function) is parsed
and checked against the layer map in DESIGN.md."""

from __future__ import annotations

import ast
from pathlib import Path

import ember

SRC = Path(ember.__file__).parent

# Bottom up. A module may import its own layer or any layer below it. Everything not
# named here (nn, optim, utils, serialization, amp, cuda, ... and the root package, which
# re-exports the op layer as `ember.*`) is the API layer on top.
LAYERS = [
    {"_dtype", "_device", "_view", "_storage", "_layout", "_names", "_grad_mode",
     "_allocator", "_memory", "backends", "compat", "_aliases", "version", "_algorithms",
     "_user_warnings", "_cpu", "_torch_function"},
    {"_tensor", "_conversions", "_printing", "_dlpack"},
    {"_core", "native"},
    {"ops", "linalg", "random", "amp.autocast_mode"},
    {"autograd"},
]
API = len(LAYERS)

# The Tensor class is the public face of the layers above it: these methods call up into
# them at call time (each is one deferred import, named here with its reason).
LATE_BINDINGS = {
    ("ember._tensor", "ember.autograd.engine"): "Tensor.backward runs the engine",
    ("ember._tensor", "ember.autograd.graph"): "grad_fn, retain_grad and the tensor hooks",
    ("ember._tensor", "ember.ops.creation"): "__deepcopy__",
    ("ember._tensor", "ember.ops.legacy_constructors"): "Tensor(...), the legacy constructor",
    ("ember._conversions", "ember.ops.creation"): "__array_wrap__: a NumPy ufunc's result as a "
                                                  "tensor (from_numpy)",
    ("ember._tensor", "ember.serialization"): "__reduce_ex__ pickles through the checkpoint "
                                              "writer",
    ("ember._tensor", "ember.storage"): "Tensor.storage() and storage_type(): PyTorch's legacy "
                                        "TypedStorage face over the untyped storage",
    ("ember._tensor", "ember.ops._arg_parser_text"): "size / stride's refusal of a dim that is "
                                                     "no int names its type as PyTorch's parser "
                                                     "does, imported when refusing",
    ("ember._aliases", "ember.ops._arg_parser_text"): "a refusal's type names as PyTorch's "
                                                      "parser prints them (numpy.ndarray), "
                                                      "imported when refusing",
    # a torch._foreach_* list op's one node (PyTorch's Foreach*Backward): a node class on
    # autograd's base whose derivative runs the per-tensor ops' graphs backward
    ("ember.ops.foreach_graph", "ember.autograd.graph"): "the list node's class, made when "
                                                         "the first one is recorded",
    ("ember.ops.foreach_graph", "ember.autograd.entry_points"): "the list node's derivative: "
                                                                "a nested backward",
    # a composite PyTorch runs as one kernel, recorded as one node (ops/one_node.py)
    ("ember.ops.one_node", "ember.autograd.saved_hooks"): "whether saved-tensor hooks are on "
                                                          "(they would see the composite's "
                                                          "values again): read when recording",
    ("ember.ops.one_node", "ember.autograd"): "the node's derivative: the composite's graph "
                                              "run backward (a nested backward)",
    # and one face of a layer above, at the path PyTorch gives it
    ("ember.autograd.profiler", "ember.profiler"): "torch.autograd.profiler, PyTorch's old "
                                                   "name for the profiler, loaded on use",
    ("ember.ops", "ember._aten"): "torch.ops.aten, PyTorch's path for the ATen namespace "
                                  "(compositions over the API), built on first access",
    ("ember.linalg.least_squares", "ember.func._vmap"): "lstsq's rank and singular values "
        "under vmap: computed once on the whole batch's values (as PyTorch's batched LAPACK "
        "call) and wrapped again at each vmap level",
}


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[-1] == "__main__":  # the package, and scripts run with -m
        return API
    for i, names in enumerate(LAYERS):
        if parts[1] in names or ".".join(parts[1:3]) in names:
            return i
    return API


def modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict) -> list[tuple[str, int]]:
    """(imported ember module, line) for every import statement in the file."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in known else target, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(t, line) for t, line in found if t == "ember" or t.startswith("ember.")]


def upward_imports() -> list[str]:
    known = modules()
    bad = []
    for name, path in sorted(known.items()):
        for target, line in imports(name, path, known):
            key = (name, ".".join(target.split(".")[:3]))
            if layer(target) > layer(name) and key not in LATE_BINDINGS and \
                    (name, ".".join(target.split(".")[:2])) not in LATE_BINDINGS:
                bad.append(f"{path.relative_to(SRC.parent)}:{line} imports {target}")
    return bad


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports() == []


def test_the_checker_sees_an_upward_import(tmp_path):
    # the parser resolves relative imports: ops importing autograd would be reported
    fake = tmp_path / "ember" / "ops"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("def f():\n    from ..autograd.graph import record\n")
    found = imports("ember.ops.bad", fake / "bad.py", {"ember.autograd.graph": None})
    assert found == [("ember.autograd.graph", 2)]
    assert layer("ember.autograd.graph") > layer("ember.ops.bad")
    assert layer("ember._core.dispatch") < layer("ember.ops.binary") < layer("ember.autograd")


def test_the_core_knows_nothing_of_ops_or_autograd():
    known = modules()
    for name, path in known.items():
        if name.startswith("ember._core"):
            targets = {t for t, _ in imports(name, path, known)}
            assert not {t for t in targets if t.startswith(("ember.ops", "ember.autograd"))}


def test_the_api_layer_never_reaches_into_a_tensors_data():
    # A tensor's array is read by the core and the kernels (`_np`, `_array()`); nn, optim
    # and the data utilities go through ops, so an interpreter sees what they do.
    found = []
    for name, path in modules().items():
        if layer(name) == API and name.split(".")[1:2] in (["nn"], ["optim"], ["utils"]):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if "._np" in line or "._array(" in line:
                    found.append(f"{name}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
