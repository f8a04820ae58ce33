"""Run PyTorch programs unchanged: make `import torch` (and every `torch.X.Y`) resolve to ember.

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


def torch_name(module_name: str) -> str:
    """`ember.nn.functional` as the user sees it (`torch.nn.functional` when installed)."""
    return _names.prefix + module_name[len("ember"):]


def missing(module_name: str, attr: str) -> AttributeError:
    """The AttributeError for an API that ember does not provide."""
    return AttributeError(f"{torch_name(module_name)}.{attr} is not implemented in ember")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves `torch.*` imports to the ember module of the same path."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        target = "ember" + spec.name[len("torch"):]
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

    def __init__(self) -> None:
        self._specs: dict = {}


def install() -> None:
    """Make `torch` mean ember in this process (idempotent)."""
    global _saved, _finder
    if _finder is not None:
        return
    _saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}
    for k in _saved:
        del sys.modules[k]
    for name, mod in list(sys.modules.items()):
        if name == "ember" or name.startswith("ember."):
            sys.modules["torch" + name[len("ember"):]] = mod
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)
    _names.prefix = "torch"


def uninstall() -> None:
    """Undo `install()`: drop the aliases and restore any real torch modules."""
    global _saved, _finder
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    _finder = None
    for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[k]
    sys.modules.update(_saved or {})
    _saved = None
    _names.prefix = "ember"


def is_installed() -> bool:
    return _finder is not None
