"""ember.utils: data loading (`ember.utils.data`), file formats (`ember.utils.safetensors`),
and seeing inside: `explain_tensor`, graph drawings (`viz`), memory (`memory`), `tensorboard`."""

from . import data, hooks
from .tensor_explainer import explain_tensor


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
