"""`torch.__future__`: switches for behaviour PyTorch plans to make the default, here the
two that decide what converting a module (`to`, `double`, ...) does to its parameters."""

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """With True, `Module._apply` puts new Parameter objects in the module instead of
    changing the existing ones' data (references held elsewhere keep the old values)."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether converting a module replaces its Parameter objects (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """With True, converting a module swaps each parameter's contents in place, keeping
    the Parameter objects (it takes precedence over the overwrite switch)."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether converting a module swaps its parameters' contents (default False)."""
    return _swap_module_params_on_conversion
