"""ember.utils: data loading (`ember.utils.data`) and file formats (`ember.utils.safetensors`)."""

from . import data


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
