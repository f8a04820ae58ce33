"""Collation under PyTorch's module path; the implementation lives in `.._collate`."""

from .._collate import (
    collate,
    collate_float_fn,
    collate_int_fn,
    collate_numpy_array_fn,
    collate_numpy_scalar_fn,
    collate_str_fn,
    collate_tensor_fn,
    default_collate,
    default_collate_err_msg_format,
    default_collate_fn_map,
    default_convert,
    np_str_obj_array_pattern,
)

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn",
           "default_collate_err_msg_format", "np_str_obj_array_pattern"]
