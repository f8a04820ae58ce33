"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, batch_first) and their cells.

Parameters are named and shaped as in PyTorch (`weight_ih_l0`, `bias_hh_l1_reverse`, ...;
gates stacked in PyTorch's order: LSTM i, f, g, o; GRU r, z, n), so state dicts load
directly. Each layer steps through time with its input and recurrent matmuls; autograd
differentiates the unrolled loop.
"""

from __future__ import annotations

import math
import numbers
import warnings

import ember as E

from ... import _dtype as dt
from ..._core import dispatch
from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ...amp.autocast_mode import cast_op, is_any_autocast_enabled
from ...autograd import saved_hooks
from ...ops.registry import rename_node
from ...ops.rnn_cell import lstm_cell
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check_args(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                proj_size) -> None:
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
            isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}",
                      stacklevel=user_stacklevel())
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(input_size, int):
        raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


# --- one step of each cell type -----------------------------------------------------------


def _rnn_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh, relu: bool) -> Tensor:
    pre = F.linear(h, w_hh, b_hh) + xw  # (ATen's cells add the input's part to the hidden's)
    return pre.relu() if relu else pre.tanh()


def fused_lstm_cell(gates: Tensor, c: Tensor) -> bool:
    """Whether `lstm_cell` (ops/rnn_cell.py) may stand in for the composite step: float32 CPU
    tensors of the cell's shapes in plain eager mode (no interpreter, saved-tensor hook or
    autocast), so nothing could see the composite's ops."""
    return (gates.__class__ is Tensor and c.__class__ is Tensor
            and gates._dtype is dt.float32 and c._dtype is dt.float32
            and not dispatch._pushed[0] and not saved_hooks._stack
            and len(gates._shape) == 2 and len(c._shape) == 2
            and gates._shape[0] == c._shape[0] and gates._shape[1] == 4 * c._shape[1]
            and _on_cpu(gates) and _on_cpu(c))


def _on_cpu(t: Tensor) -> bool:
    s = t._storage  # (None: a fresh CPU result whose storage is made on first need)
    return s is None or s.device.type == "cpu"


def _lstm_step(xw: Tensor, state, w_hh: Tensor, b_hh, w_hr, fused: bool = False) -> tuple:
    h, c = state
    gates = F.linear(h, w_hh, b_hh) + xw
    if fused and fused_lstm_cell(gates, c):  # (nn.LSTM's one-node layers: ops/rnn_cell.py)
        return lstm_cell(gates, c)
    # (ATen's cells split with unsafe_chunk, along dim 1 as given: their nodes show it)
    i, f, g, o = gates.unsafe_chunk(4, gates.ndim - 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh) -> Tensor:
    hw = F.linear(h, w_hh, b_hh)
    x_r, x_z, x_n = xw.unsafe_chunk(3, xw.ndim - 1)
    h_r, h_z, h_n = hw.unsafe_chunk(3, hw.ndim - 1)
    r = (h_r + x_r).sigmoid()  # (operands in ATen's order, so the graphs' edges match)
    z = (h_z + x_z).sigmoid()
    n = (x_n + h_n * r).tanh()
    # NOTE: (1 - z) n + z h written as ATen's GRU cell writes it, (h - n) z + n: the same
    # roundings as torch's (and its graph: AddBackward0 of MulBackward0 and TanhBackward0).
    return (h - n) * z + n


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU: parameters, checks, the layer loop."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        _check_args(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dirs = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(dirs):
                in_size = input_size if layer == 0 else real_hidden * dirs
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate, in_size)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = base + suffix
                    setattr(self, name, Parameter(E.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (cuDNN weight packing has no meaning here)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- forward -------------------------------------------------------------------------

    def _prepare(self, input: Tensor):
        if input.dim() not in (2, 3):
            what = "D tensor" if self.mode.startswith("RNN") else "D"
            raise ValueError(f"{self.mode[:4].rstrip('_')}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}{what} instead")
        w = self._flat_weights[0]
        if input.dtype is not w.dtype and not is_any_autocast_enabled():
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if self.batch_first:
            input = input.transpose(0, 1)
        return input, batched

    def _state_shape(self, batch: int, proj: bool = True) -> tuple[int, int, int]:
        dirs = 2 if self.bidirectional else 1
        size = self.proj_size if proj and self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, batch, size)

    def _check_hidden(self, hx: Tensor, expected, batched: bool, what: str = "hidden",
                      packed: bool = False) -> Tensor:
        if packed:  # (PyTorch checks only the size of a packed input's state)
            pass
        elif batched and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                               f"{hx.dim()}-D tensor")
        if not batched:
            if hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
        if tuple(hx.shape) != tuple(expected):
            label = "Expected hidden size {}, got {}" if what == "hidden" else \
                "Expected hidden[1] size {}, got {}" if what == "cell" else \
                "Expected hidden[0] size {}, got {}"
            raise RuntimeError(label.format(tuple(expected), list(hx.shape)))
        return hx

    def _run(self, steps: list, states: list):
        """Run every layer and direction over `steps` (one (B_t, H) tensor per time step,
        B_t non-increasing: packed sequences drop finished rows); `states[k]` is the initial
        state of layer k // dirs, direction k % dirs. Returns the per-step outputs of the last
        layer and the final states.

        Layers pass lists of per-step tensors to each other, so backward stays linear in
        the sequence length (slicing one big tensor per step would make it quadratic).
        """
        dirs = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                seq, final = self._run_direction(steps, states[k], self.all_weights[k],
                                                 reverse=d == 1)
                outs.append(seq)
                finals.append(final)
            steps = outs[0] if dirs == 1 else [E.cat(pair, -1) for pair in zip(*outs)]
            if self.dropout and self.training and layer < self.num_layers - 1:
                steps = self._dropout_steps(steps)
        return steps, finals

    def _dropout_steps(self, steps: list) -> list:
        """Dropout between layers, with one mask drawn for all steps as PyTorch draws it."""
        rows = [s.shape[0] for s in steps]
        first = steps[0]
        ones = E.ones((sum(rows),) + tuple(first.shape[1:]), dtype=first.dtype,
                      device=first.device)
        mask = F.dropout(ones, self.dropout)
        return [s * m for s, m in zip(steps, mask.split(rows))]

    def _run_direction(self, xs: list, state, params, reverse: bool):
        w_ih, w_hh = params[0], params[1]
        b_ih = params[2] if self.bias else None
        b_hh = params[3] if self.bias else None
        w_hr = params[-1] if self.proj_size > 0 else None
        lstm = self.mode == "LSTM"
        # where PyTorch's layer is one oneDNN node, the step is one node too (same numbers)
        fused = lstm and w_hr is None and E.backends.mkldnn.enabled and \
            not is_any_autocast_enabled()
        full = (state[0] if lstm else state).shape[0]
        order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
        outputs = [None] * len(xs)
        for t in order:
            xw = F.linear(xs[t], w_ih, b_ih)
            n = xs[t].shape[0]
            cur = state if n == full else (
                tuple(z[:n] for z in state) if lstm else state[:n])
            if lstm:
                new = _lstm_step(xw, cur, w_hh, b_hh, w_hr, fused)
                outputs[t] = new[0]
            elif self.mode == "GRU":
                new = outputs[t] = _gru_step(xw, cur, w_hh, b_hh)
            else:
                new = outputs[t] = _rnn_step(xw, cur, w_hh, b_hh, self.mode == "RNN_RELU")
            if n != full:  # rows n.. belong to sequences that have not started or have ended
                new = tuple(E.cat([a, z[n:]]) for a, z in zip(new, state)) if lstm else \
                    E.cat([new, state[n:]])
            state = new
        return outputs, state

    def _finish(self, out: Tensor, batched: bool) -> Tensor:
        _name_node(out, self._output_node())
        if self.batch_first:
            out = out.transpose(0, 1)
            # PyTorch's GRU / RNN kernels transpose their output in place (transpose_)
            _name_node(out, None if self.mode == "LSTM" else "TransposeBackward1")
        return out if batched else out.squeeze(0 if self.batch_first else 1)

    def _output_node(self) -> str | None:
        """The node PyTorch's kernel ends a padded output with: the concatenation of the two
        directions, or for a float32 LSTM its oneDNN layer (PyTorch's CPU path whenever
        oneDNN is on and there is no projection); else the stack of steps ember made too."""
        if self.bidirectional:
            return "CatBackward0"
        if self.mode == "LSTM" and self.proj_size == 0 and E.backends.mkldnn.enabled and \
                self._flat_weights[0].dtype is E.float32:
            return "MkldnnRnnLayerBackward0"
        return None

    def _initial(self, hx, batch: int, batched: bool, like: Tensor, sorted_indices,
                 packed: bool = False):
        """The initial state(s) per layer and direction, checked and in the packed order."""
        lstm = self.mode == "LSTM"
        shapes = [self._state_shape(batch)] + ([self._state_shape(batch, False)] if lstm else [])
        if hx is None:
            parts = [E.zeros(s, dtype=like.dtype, device=like.device) for s in shapes]
        else:
            given = (hx[0], hx[1]) if lstm else (hx,)
            if sorted_indices is not None:  # (as PyTorch: permuted before any check)
                given = tuple(h.index_select(1, sorted_indices) for h in given)
            if lstm and not packed and any(h.dim() != (3 if batched else 2) for h in given):
                which = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {which} input, hx and cx should also be {3 if batched else 2}-D but "
                    f"got ({given[0].dim()}-D, {given[1].dim()}-D) tensors")
            # (PyTorch names an LSTM's two states hidden[0] and hidden[1])
            names = ("hidden[0]", "cell") if lstm else ("hidden",)
            parts = [self._check_hidden(h, s, batched, names[i], packed)
                     for i, (h, s) in enumerate(zip(given, shapes))]
            if lstm and batched and sorted_indices is None and len(hx) != 2:
                # NOTE: PyTorch reads hx[0] and hx[1] only; its kernel refuses a longer tuple
                # unless a permutation (packed, unsorted) or unsqueeze (unbatched) rebuilt it
                raise RuntimeError("lstm expects two hidden states")
        if lstm:
            return list(zip(parts[0].unbind(0), parts[1].unbind(0)))
        return list(parts[0].unbind(0))

    def forward(self, input, hx=None):
        from ..utils.rnn import PackedSequence

        packed = isinstance(input, PackedSequence)
        if self.mode == "LSTM" and not packed and is_any_autocast_enabled():
            # NOTE: PyTorch's CPU LSTM runs through mkldnn_rnn_layer, on autocast's lower list
            input, = cast_op("mkldnn_rnn_layer", input)
            hx = hx if hx is None else cast_op("mkldnn_rnn_layer", *hx)
        if packed:
            sizes = input.batch_sizes.tolist()
            steps = list(input.data.split(sizes))
            batched, batch, like = True, sizes[0], input.data
            sorted_indices, unsorted_indices = input.sorted_indices, input.unsorted_indices
        else:
            x, batched = self._prepare(input)
            steps = list(x.unbind(0))
            batch, like = x.shape[1], x
            sorted_indices = unsorted_indices = None
        states = self._initial(hx, batch, batched, like, sorted_indices, packed)
        self._check_devices(like, hx)
        outs, finals = self._run(steps, states)
        if self.mode == "LSTM":
            state = (E.stack([h for h, _ in finals]), E.stack([c for _, c in finals]))
        else:
            state = (E.stack(finals),)
        if unsorted_indices is not None:
            state = tuple(s.index_select(1, unsorted_indices) for s in state)
        if not batched:
            state = tuple(s.squeeze(1) for s in state)
        state = state if self.mode == "LSTM" else state[0]
        if packed:
            return PackedSequence(E.cat(outs), input.batch_sizes, sorted_indices,
                                  unsorted_indices), state
        return self._finish(E.stack(outs), batched), state

    def _check_devices(self, input: Tensor, hx) -> None:
        """PyTorch's RNN kernel's check (after the shape checks): every parameter, then
        every hidden state, on the input's device, in its words."""
        dev = input.device
        for what, tensors in (("parameter", self._flat_weights),
                              ("hidden", (hx,) if isinstance(hx, Tensor) else hx or ())):
            for t in tensors:
                if t is not None and t.device != dev:
                    raise RuntimeError(f"Input and {what} tensors are not at the same device, "
                                       f"found input tensor at {dev} and {what} tensor at "
                                       f"{t.device}")


def _name_node(out: Tensor, name: str | None) -> None:
    if name is not None and out.grad_fn is not None:
        rename_node(out.grad_fn, name)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; `forward` returns output, (h_n, c_n)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z and candidate n, h_t = (1 - z) n + z h_{t-1}."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# --- cells ------------------------------------------------------------------------------


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(E.empty((g, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(E.empty((g, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(E.empty(g, device=device, dtype=dtype))
            self.bias_hh = Parameter(E.empty(g, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, input: Tensor, hx, n_states: int = 1):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        if hx is not None:
            for i, h in enumerate([hx] if n_states == 1 else hx):
                if h.dim() not in (1, 2):
                    what = "hidden" if n_states == 1 else f"hx[{i}]"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D "
                                     f"instead")
        if n_states == 2 and isinstance(hx, Tensor):
            raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                            "not Tensor")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            zeros = E.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            hx = zeros if n_states == 1 else (zeros, zeros)
        elif not batched:
            hx = hx.unsqueeze(0) if n_states == 1 else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check_sizes(x, [hx] if n_states == 1 else list(hx), n_states)
        return x, hx, batched

    def _check_sizes(self, x: Tensor, states: list, n_states: int) -> None:
        """ATen's rnn-cell checks (check_rnn_cell_forward_input / _hidden), in its order."""
        if len(states) != n_states:
            raise RuntimeError("lstm_cell expects two hidden states")
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected "
                               f"{self.input_size}")
        for i, h in enumerate(states):
            if h.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{i} "
                                   f"batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, h, batched = self._batch(input, hx)
        out = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                        self.bias_hh, self.nonlinearity == "relu")
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx=None) -> tuple[Tensor, Tensor]:
        x, state, batched = self._batch(input, hx, 2)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), state, self.weight_hh,
                          self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, h, batched = self._batch(input, hx)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                        self.bias_hh)
        return out if batched else out.squeeze(0)
