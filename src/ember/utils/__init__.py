"""ember.utils: data loading (`ember.utils.data`) and file formats (`ember.utils.safetensors`)."""

from . import data
