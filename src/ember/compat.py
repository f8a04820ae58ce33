"""Run PyTorch programs unchanged: make `import torch` (and every `torch.X.Y`) resolve to ember,
and `import torchviz` to ember.utils.viz (its `make_dot`).

`install()` aliases the `torch` module tree to ember's and makes reprs print `torch.`;
`uninstall()` restores whatever was there before. `python -m ember.run SCRIPT`
does this around a script. Where a program reaches for something ember does not
have, the error names the PyTorch API (`torch.nn.functional.ctc_loss is not
implemented in ember`), not an internal object.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

from . import _names

_saved: dict | None = None
_finder = None
_renamed: dict[type, str] = {}  # class -> its ember __module__, while installed


def torch_name(module_name: str) -> str:
    """`ember.nn.functional` as the user sees it (`torch.nn.functional` when installed)."""
    return _names.prefix + module_name[len("ember"):]


def missing(module_name: str, attr: str) -> AttributeError:
    """The AttributeError for an API that ember does not provide."""
    if attr.startswith("__") and attr.endswith("__"):  # a protocol probe, not an API
        return AttributeError(f"module '{module_name}' has no attribute '{attr}'")
    return AttributeError(f"{torch_name(module_name)}.{attr} is not implemented in ember")


_absent: set[str] = set()


def submodule_or_missing(package: str, name: str):
    """`package.name` imported on first use when it is a submodule (torch imports its
    submodules eagerly, so programs use `torch.utils.checkpoint` without importing it);
    otherwise the AttributeError naming the missing PyTorch API."""
    full = f"{package}.{name}"
    if name.isidentifier() and not name.startswith("__") and full not in _absent:
        if importlib.util.find_spec(full) is not None:
            return importlib.import_module(full)
        _absent.add(full)
    raise missing(package, name)


# Top-level packages that mean a part of ember while installed: `torch` itself,
# torchviz, whose `make_dot` ember provides (ember.utils.viz), and MLX (its face,
# ember.mlx).
_ALIASES = {"torch": "ember", "torchviz": "ember.utils.viz", "mlx": "ember.mlx"}


def _alias_target(fullname: str) -> str | None:
    """The ember module that `fullname` (`torch.nn`, `torchviz`) stands for, or None."""
    top = fullname.partition(".")[0]
    target = _ALIASES.get(top)
    return None if target is None else target + fullname[len(top):]


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves `torch.*` (and `torchviz`) imports to the ember module of the same path."""

    def find_spec(self, fullname, path, target=None):
        if _alias_target(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        target = _alias_target(spec.name)
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name is not None and not e.name.startswith("ember"):
                raise
            raise ModuleNotFoundError(f"{spec.name} is not implemented in ember",
                                      name=spec.name) from None
        self._specs[id(module)] = module.__spec__
        return module

    def exec_module(self, module) -> None:
        # The import system stamped the torch spec onto ember's module; put ember's back.
        module.__spec__ = self._specs.pop(id(module), module.__spec__)
        _rename_classes(module)
        if module.__name__.startswith("ember.mlx"):
            _rename_mlx_classes()

    def __init__(self) -> None:
        self._specs: dict = {}


def _public_module(cls: type) -> str:
    """Where PyTorch keeps the class ember defines in `cls.__module__`.

    ember's tree mirrors torch's (`ember.nn.modules.linear` is `torch.nn.modules.linear`);
    the core types that live in private files (`ember._tensor.Tensor`) are `torch.Tensor`.
    """
    module = cls.__module__
    top = sys.modules.get("ember")
    private = any(part.startswith("_") for part in module.split(".")[1:])
    if private and getattr(top, cls.__name__, None) is cls:
        return "torch"
    return _names.prefix + module[len("ember"):]


def _mlx_module(module: str) -> str:
    """Where MLX keeps a class of ember's MLX face: the same path under `mlx`, up to its
    first private part (`ember.mlx.core._array` is `mlx.core`, as `mlx.core.array`)."""
    parts = ["mlx"]
    for part in module.split(".")[2:]:
        if part.startswith("_"):
            break
        parts.append(part)
    return ".".join(parts)


def _rename_classes(module) -> None:
    """Give the classes defined in an ember module torch's module path (for `type(x)`,
    `torch.typename` and pickles that name classes), or MLX's for the MLX face's classes;
    `uninstall()` restores them."""
    name = getattr(module, "__name__", "")
    if name != "ember" and not name.startswith("ember."):
        return
    rename = _mlx_module if name.startswith("ember.mlx.") or name == "ember.mlx" else None
    for obj in list(vars(module).values()):
        if isinstance(obj, type) and obj.__module__ == name and obj not in _renamed:
            _renamed[obj] = name
            obj.__module__ = rename(name) if rename else _public_module(obj)


def _rename_mlx_classes() -> None:
    """Rename the classes of every MLX-face module loaded so far (importing `mlx.nn` loads
    `ember.mlx.nn.layers.*` by the ordinary import system, past the finder)."""
    for name, mod in list(sys.modules.items()):
        if name.startswith("ember.mlx.") and mod is not None:
            _rename_classes(mod)


def _patch_spawn(on: bool) -> None:
    """Make processes started with the "spawn" method install the alias before they import
    the program's main module (DataLoader workers, multiprocessing pools)."""
    import multiprocessing.spawn as spawn

    if on and not hasattr(spawn.get_command_line, "_ember_original"):
        original = spawn.get_command_line

        def get_command_line(**kwds):
            cmd = original(**kwds)
            if "-c" in cmd:
                i = cmd.index("-c") + 1
                cmd[i] = "from ember import compat; compat.install(); " + cmd[i]
            return cmd

        get_command_line._ember_original = original
        spawn.get_command_line = get_command_line
    elif not on and hasattr(spawn.get_command_line, "_ember_original"):
        spawn.get_command_line = spawn.get_command_line._ember_original


def install() -> None:
    """Make `torch` mean ember in this process (idempotent)."""
    global _saved, _finder
    if _finder is not None:
        return
    _saved = {k: v for k, v in sys.modules.items() if _alias_target(k) is not None}
    for k in _saved:
        del sys.modules[k]
    for name, mod in list(sys.modules.items()):
        if name == "ember" or name.startswith("ember."):
            sys.modules["torch" + name[len("ember"):]] = mod
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)
    _names.prefix = "torch"
    for name, mod in list(sys.modules.items()):
        if name == "ember" or name.startswith("ember."):
            _rename_classes(mod)
    for cls in _return_types():  # (made as ops are; those made later take the prefix)
        if cls not in _renamed:
            _renamed[cls] = cls.__module__
            cls.__module__ = "torch.return_types"
    _patch_spawn(True)


def uninstall() -> None:
    """Undo `install()`: drop the aliases and restore any real torch modules."""
    global _saved, _finder
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    _finder = None
    for k in [k for k in sys.modules if _alias_target(k) is not None]:
        del sys.modules[k]
    sys.modules.update(_saved or {})
    _saved = None
    _names.prefix = "ember"
    for cls, module in _renamed.items():
        cls.__module__ = module
    _renamed.clear()
    for cls in _return_types():
        cls.__module__ = "ember.return_types"
    _patch_spawn(False)


def _return_types() -> list:
    """The named-tuple result types made so far (ops' module, read where loaded: this module
    sits below the ops and does not import them)."""
    made = sys.modules.get("ember.ops._return_types")
    return [] if made is None else list(made.RETURN_TYPES.values())


def is_installed() -> bool:
    return _finder is not None
