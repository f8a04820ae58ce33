"""A model's graph as TensorBoard's GraphDef, read off the autograd graph of one forward.

PyTorch traces the model with TorchScript; ember has no tracer yet, so the graph drawn
is the one autograd records while the model runs once on the given inputs: each backward
node stands for the forward op that made it (`AddmmBackward0` is drawn as `Addmm`), its
inputs are the ops (or parameters, or model inputs) that fed it. Ops are grouped into
name scopes by the module that ran them (`Net/Linear[fc1]/Addmm`), as PyTorch groups
them, so TensorBoard folds each module into one box. Only tensors that carry gradients
are seen: integer inputs (token ids) and ops on constants do not appear.
TODO(lead): switch to the compiler's captured graph when the tracer lands.
"""

from __future__ import annotations

import re

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ..._tensor import Tensor
from ...autograd.grad_mode import enable_grad
from ...autograd.graph import AccumulateGrad

_BACKWARD = re.compile(r"Backward\d*$")


def _scopes(model) -> dict[int, str]:
    """id(module) -> its name scope: `Net`, `Net/Linear[fc1]`, `Net/Sequential[body]/ReLU[0]`."""
    scopes = {id(model): type(model).__name__}
    for path, mod in model.named_modules():
        if not path:
            continue
        parent, _, name = path.rpartition(".")
        parent_scope = scopes[id(model.get_submodule(parent))] if parent else scopes[id(model)]
        scopes.setdefault(id(mod), f"{parent_scope}/{type(mod).__name__}[{name}]")
    return scopes


def _tensors(obj) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tensors(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _tensors(v)]
    return []


def _claim(outputs, scope: str, owner: dict) -> None:
    """Give `scope` to every node behind `outputs` that no inner module has claimed."""
    stack = [t.grad_fn for t in _tensors(outputs)]
    while stack:
        fn = stack.pop()
        if fn is None or isinstance(fn, AccumulateGrad) or id(fn) in owner:
            continue
        owner[id(fn)] = scope
        stack.extend(n for n, _ in fn.next_functions)


def _node(name: str, op: str, inputs: list[str], shape, attr: str = "") -> NodeDef:
    attrs = {"attr": AttrValue(s=attr.encode("utf-8"))}
    if shape is not None:
        dims = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in shape])
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[dims]))
    return NodeDef(name=name, op=op, input=inputs, attr=attrs)


def graph(model, args, verbose: bool = False) -> tuple[GraphDef, RunMetadata]:
    """Run `model(*args)` once (in eval mode) and return its graph and step stats."""
    if args is None:
        raise TypeError("add_graph needs input_to_model: ember draws the graph autograd "
                        "records while the model runs on it")
    args = (args,) if isinstance(args, Tensor) else tuple(args)
    # Inputs that could carry a gradient are made to, so that they show up as leaves.
    inputs = [a.detach().requires_grad_() if isinstance(a, Tensor) and
              (a.is_floating_point() or a.is_complex()) else a for a in args]
    scopes = _scopes(model)
    owner: dict[int, str] = {}
    handles = [mod.register_forward_hook(
        lambda m, a, out, scope=scopes[id(mod)]: _claim(out, scope, owner))
        for mod in dict.fromkeys(m for _, m in model.named_modules())]
    training = model.training
    model.train(False)
    try:
        with enable_grad():
            out = model(*inputs)
    finally:
        model.train(training)
        for h in handles:
            h.remove()
    outputs = _tensors(out)

    # Every node behind the outputs.
    found: dict[int, object] = {}
    stack = [t.grad_fn for t in outputs]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in found:
            continue
        found[id(fn)] = fn
        stack.extend(n for n, _ in fn.next_functions)

    params = {}
    for path, p in model.named_parameters():
        mod_path, _, name = path.rpartition(".")
        mod = model.get_submodule(mod_path) if mod_path else model
        params[id(p)] = f"{scopes[id(mod)]}/{name}"
    input_ids = {id(a): i for i, a in enumerate(inputs)}
    # Inputs, then parameters in the model's order, then the ops in the order they ran.
    rank = {**{k: i for i, k in enumerate(params)},
            **{k: i - len(input_ids) for k, i in input_ids.items()}}
    nodes = sorted(found.values(), key=lambda fn: (
        (0, rank.get(id(fn.variable), len(rank))) if isinstance(fn, AccumulateGrad)
        else (1, fn._seq)))

    # An op's output shape, read off what its consumers recorded of their inputs.
    shapes: dict[int, tuple] = {}
    for fn in nodes:
        for (src, _), meta in zip(getattr(fn, "_edges", ()), getattr(fn, "_in_meta", ())):
            if src is not None and meta is not None:
                shapes.setdefault(id(src), tuple(meta[0]))
    for t in outputs:
        if t.grad_fn is not None:
            shapes[id(t.grad_fn)] = tuple(t.shape)

    names: dict[int, str] = {}
    used: dict[str, int] = {}
    defs = []
    for fn in nodes:
        if isinstance(fn, AccumulateGrad):
            var = fn.variable
            if id(var) in input_ids:
                name, op = f"input/input.{input_ids[id(var)]}", "IO Node"
            else:
                name, op = params.get(id(var), f"{scopes[id(model)]}/leaf"), "Parameter"
            shape, attr = tuple(var.shape), ""
        else:
            op = _BACKWARD.sub("", fn.name()) or fn.name()
            name = f"{owner.get(id(fn), scopes[id(model)])}/{op}"
            shape = shapes.get(id(fn))
            params_text = {k: v for k, v in (getattr(fn, "_params", None) or {}).items()
                           if k != "fn"}
            attr = f"{fn.name()} {params_text}" if params_text else fn.name()
        n = used.get(name, 0)
        used[name] = n + 1
        unique = name if n == 0 else f"{name}.{n}"
        names[id(fn)] = unique
        ins = [] if isinstance(fn, AccumulateGrad) else \
            [names[id(src)] for src, _ in fn.next_functions if src is not None]
        defs.append(_node(unique, op, ins, shape, attr))
    for i, t in enumerate(outputs):
        ins = [names[id(t.grad_fn)]] if t.grad_fn is not None else []
        defs.append(_node(f"output/output.{i}", "IO Node", ins, tuple(t.shape)))
    if verbose:
        for d in defs:
            print(f"{d.name} = {d.op}({', '.join(d.input)})")
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=defs, versions=VersionDef(producer=22)), stats
