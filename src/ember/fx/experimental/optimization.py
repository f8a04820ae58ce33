"""`torch.fx.experimental.optimization`: inference-time rewrites of traced models:
`fuse` folds each BatchNorm that follows a Conv / Linear into it, `remove_dropout` drops
Dropout modules."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ... import nn
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from .._symbolic_trace import symbolic_trace
from ..graph_module import GraphModule
from ..interpreter import Transformer
from ..node import Node

__all__ = ["fuse", "matches_module_pattern", "remove_dropout", "replace_node_module"]


def _parent_name(target: str) -> tuple[str, str]:
    """`a.b.c` -> (`a.b`, `c`)."""
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def matches_module_pattern(pattern: Iterable[type], node: Node, modules: dict[str, Any]
                           ) -> bool:
    """Whether `node` and its first argument are calls of modules of exactly the types
    `pattern` names (first argument's type first)."""
    if len(node.args) == 0:
        return False
    for expected, current in zip(pattern, (node.args[0], node)):
        if not isinstance(current, Node) or current.op != "call_module" \
                or not isinstance(current.target, str) or current.target not in modules \
                or type(modules[current.target]) is not expected:
            return False
    return True


def replace_node_module(node: Node, modules: dict[str, Any], new_module: nn.Module) -> None:
    """Install `new_module` where `node`'s call_module target points."""
    parent, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent], name, new_module)


def fuse(model: nn.Module, inplace: bool = False, no_trace: bool = False) -> nn.Module:
    """A GraphModule of `model` (a copy unless `inplace`) with each BatchNorm that only
    follows a Conv1d/2d/3d or Linear folded into that layer's weights (eval mode)."""
    patterns = [(nn.Conv1d, nn.BatchNorm1d), (nn.Conv2d, nn.BatchNorm2d),
                (nn.Conv3d, nn.BatchNorm3d), (nn.Linear, nn.BatchNorm1d)]
    if not inplace:
        model = copy.deepcopy(model)
    fx_model = model if no_trace and isinstance(model, GraphModule) else symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    new_graph = copy.deepcopy(fx_model.graph)
    for pattern in patterns:
        for node in new_graph.nodes:
            if not matches_module_pattern(pattern, node, modules):
                continue
            if len(node.args[0].users) > 1:
                continue  # (the layer's output is used elsewhere too: keep it unfused)
            layer, bn = modules[node.args[0].target], modules[node.target]
            if not bn.track_running_stats:
                continue
            fused = fuse_linear_bn_eval(layer, bn) if pattern[0] is nn.Linear \
                else fuse_conv_bn_eval(layer, bn)
            replace_node_module(node.args[0], modules, fused)
            node.replace_all_uses_with(node.args[0])
            new_graph.erase_node(node)
    return GraphModule(fx_model, new_graph)


class _DropoutRemover(Transformer):
    def call_module(self, target: Any, args: tuple, kwargs: dict) -> Any:
        if isinstance(self.submodules[target], nn.Dropout):
            if len(args) != 1:
                raise AssertionError(f"Expected 1 arg for Dropout, got {len(args)}")
            return args[0]
        return super().call_module(target, args, kwargs)


def remove_dropout(model: nn.Module) -> nn.Module:
    """A GraphModule of `model` without its Dropout modules (their input passes through)."""
    return _DropoutRemover(symbolic_trace(model)).transform()
