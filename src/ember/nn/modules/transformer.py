"""MultiheadAttention and the Transformer encoder/decoder layers and stacks.

Names, child order, initialisation order and reprs follow PyTorch, so a torch
state_dict loads as is and a seeded construction draws the same weights. Stacks
deep-copy their layer, so every layer starts from the same weights, as in PyTorch.
"""

from __future__ import annotations

import copy
import warnings

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel
from ...backends import mha as _mha
from .. import functional as F
from .._functional.attention import canonical_mask, fused_autocast_input, fused_masks
from ..init import xavier_uniform_
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _activation(activation):
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _relu_or_gelu(activation) -> int:
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        activation = _activation(activation)
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                              src.dtype, src_mask, "src_mask")
        src_mask = canonical_mask(src_mask, "src_mask", src.dtype)
        x = src
        act, fused = self.activation, self.activation_relu_or_gelu and self._fast_path(src)
        if fused:
            # NOTE: in inference PyTorch runs this layer as one fused kernel that knows only
            # relu and exact gelu (so a GELU('tanh') module acts as exact gelu), reads a
            # float mask of any float dtype as one of the input's dtype and then any nonzero
            # entry as masked, merges the two masks as MultiheadAttention.merge_masks does,
            # ignores the is_causal hint, and gives NaN for a query whose every key is masked
            # (as the attention's explicit-weights path does)
            act = F.gelu if self.activation_relu_or_gelu == 2 else F.relu
            src_mask, src_key_padding_mask = fused_masks(*(
                m.to(src.dtype) if m is not None and m.dtype.is_floating_point else m
                for m in (src_mask, src_key_padding_mask)), src, self.self_attn.num_heads)
            is_causal = False
            x = fused_autocast_input(src)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal,
                                   fused)
            x = x + self._ff_block(self.norm2(x), act)
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal,
                                              fused))
            x = self.norm2(x + self._ff_block(x, act))
        return x

    def _fast_path(self, src: Tensor) -> bool:
        """Whether PyTorch would run this call through its fused inference kernel."""
        attn = self.self_attn
        if not _mha.get_fastpath_enabled() or src.dim() != 3 or self.training:
            return False
        if not attn.batch_first or attn.in_proj_bias is None or \
                not attn._qkv_same_embed_dim or self.norm1.eps != self.norm2.eps or \
                attn.num_heads % 2 == 1 or E.is_autocast_enabled():
            return False
        if any(m._forward_hooks or m._forward_pre_hooks for m in self.modules()):
            return False
        params = (attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                  attn.out_proj.bias, self.norm1.weight, self.norm1.bias, self.norm2.weight,
                  self.norm2.bias, self.linear1.weight, self.linear1.bias, self.linear2.weight,
                  self.linear2.bias)
        return not (E.is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (src,) + params))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False,
                  fused: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=fused, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor, activation=None) -> Tensor:
        act = self.activation if activation is None else activation
        return self.dropout2(self.linear2(self.dropout(act(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over `memory`, then feed-forward; residuals and LayerNorms."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def __setstate__(self, state: dict) -> None:
        # NOTE: as PyTorch's: a copied or unpickled layer whose activation was a module (kept
        # in `_modules`, not in the instance dict) gets F.relu in its instance dict, which
        # shadows the module, so deep-copied stacks of such layers apply relu
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _seq_len(x: Tensor, batch_first: bool) -> int:
    return x.size(0) if x.dim() == 2 else x.size(1 if batch_first else 0)


def _detect_is_causal(mask: Tensor | None, is_causal: bool | None, size: int) -> bool:
    """PyTorch's stacks' hint: None means "is `mask` exactly the causal mask of `size`?".

    A causal hint lets attention drop the mask (and so its dtype checks) for its own causal
    masking, which is why the stacks look."""
    if is_causal is not None or mask is None:
        return is_causal is True
    causal = Transformer.generate_square_subsequent_mask(size, dtype=mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())


def _clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


# PyTorch's module-level helpers under their own names and signatures: code that copies
# torch's layers (DETR and its kind) imports them from torch.nn.modules.transformer.
def _get_clones(module: Module, N: int) -> ModuleList:
    return _clones(module, N)


def _get_activation_fn(activation: str):
    if isinstance(activation, str):
        return _activation(activation)
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_seq_len(src: Tensor, batch_first: bool) -> int | None:
    return None if src.is_nested else _seq_len(src, batch_first)


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None,
                           size: int | None = None) -> bool:
    if size is None and mask is not None:
        size = mask.size(-2)
    return _detect_is_causal(mask, is_causal, size)


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    return Transformer.generate_square_subsequent_mask(sz, device=device, dtype=dtype)


def _why_not_nested(layer) -> str:
    """PyTorch's reason for not converting an encoder's input to a nested tensor ("" if none)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True"
                "(use batch_first for better inference performance)")
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


def _check_padding_shape(src: Tensor, pad: Tensor) -> None:
    """The nested-tensor kernels' checks on an (N, L) padding mask for an (N, L, E) input."""
    if pad.dim() != 2:
        raise RuntimeError("Padding mask should be 2D")
    if tuple(pad.shape) != tuple(src.shape[:2]):
        raise RuntimeError("Mask size should match input size")


def _left_aligned(src: Tensor, pad: Tensor) -> bool:
    """Whether every row of the (N, L) padding mask has its padding only at the end."""
    _check_padding_shape(src, pad)
    return not bool((~pad[:, 1:] & pad[:, :-1]).any())


_warned_nested = [False]


def _warn_nested_prototype() -> None:
    """The warning PyTorch prints once per process when it builds that nested tensor."""
    if not _warned_nested[0]:
        _warned_nested[0] = True
        warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change "
                      "in the near future. We recommend specifying layout=torch.jagged when "
                      "constructing a nested tensor, as this layout receives active "
                      "development, has better operator coverage, and works with "
                      "torch.compile.", UserWarning, stacklevel=user_stacklevel())


class TransformerEncoder(Module):
    """`num_layers` copies of an encoder layer, then an optional final norm."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        # PyTorch's flag and its warning (which tutorials' `batch_first=False` encoders print)
        # follow PyTorch's reasons; the fast path's visible effect is in `_fast_path_padding`
        why_not = _why_not_nested(encoder_layer)
        self.use_nested_tensor = enable_nested_tensor and not why_not
        if enable_nested_tensor and why_not:
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=user_stacklevel())

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        # NOTE: as PyTorch, the stack turns both masks into float masks once (warning when
        # their dtypes differ), so its layers and attention see matching float masks
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                              src.dtype, mask, "mask")
        mask = canonical_mask(mask, "mask", src.dtype)
        out = src
        padding = self._fast_path_padding(src, mask, src_key_padding_mask)
        is_causal = _detect_is_causal(mask, is_causal,
                                      _seq_len(src, self.layers[0].self_attn.batch_first))
        # (on that fast path PyTorch drops the padded tokens, whatever their float mask value)
        layer_padding = src_key_padding_mask if padding is None else padding
        for mod in self.layers:
            out = mod(out, src_mask=mask, is_causal=is_causal,
                      src_key_padding_mask=layer_padding)
        if padding is not None:
            # PyTorch ran the layers on a nested tensor of the unpadded tokens and padded the
            # result back with zeros
            out = out.masked_fill(padding.unsqueeze(-1), 0.0)
            _warn_nested_prototype()
        return self.norm(out) if self.norm is not None else out

    def _fast_path_padding(self, src: Tensor, mask, src_key_padding_mask) -> Tensor | None:
        """The padding positions (True) when PyTorch would take its sparsity fast path
        (inference, a left-aligned key padding mask and no attention mask), else None;
        raises where that path's nested-tensor kernels do."""
        first = self.layers[0]
        if not _mha.get_fastpath_enabled() or not self.use_nested_tensor or first.training or \
                src.dim() != 3 or src_key_padding_mask is None:
            return None
        pad = src_key_padding_mask != 0  # (a canonical float mask: 0 keeps a token)
        # NOTE: as PyTorch, the left-alignment check runs before the attention mask, autocast
        # and grad mode are considered, and raises the nested-tensor kernel's errors
        if self.mask_check and not _left_aligned(src, pad):
            return None
        if mask is not None or E.is_autocast_enabled():
            return None
        attn = first.self_attn
        params = (attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                  attn.out_proj.bias, first.norm1.weight, first.norm1.bias, first.norm2.weight,
                  first.norm2.bias, first.linear1.weight, first.linear1.bias,
                  first.linear2.weight, first.linear2.bias)
        if E.is_grad_enabled() and (src.requires_grad or any(
                p is not None and p.requires_grad for p in params)):
            return None
        _check_padding_shape(src, pad)  # (checked here too when mask_check is off)
        if E.is_autocast_enabled("cpu") and src.dtype is not E.float64:
            # NOTE: PyTorch's check for autocast names CUDA; under CPU autocast its nested
            # path fails thus (a float64 input fails first in the layer's matmul, as here)
            low = {E.bfloat16: "BFloat16", E.float16: "Half"}[E.get_autocast_dtype("cpu")]
            raise RuntimeError(f"expected scalar type Float but found {low}")
        if bool(pad.all()):
            raise RuntimeError("to_padded_tensor: at least one constituent tensor should have "
                               "non-zero numel")
        # the nested tensor keeps each row's first (number of unpadded) tokens, which are the
        # unpadded ones only when the mask is left-aligned
        return E.arange(pad.shape[1]) >= (~pad).sum(1, keepdim=True)


class TransformerDecoder(Module):
    """`num_layers` copies of a decoder layer, then an optional final norm."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        out = tgt
        tgt_is_causal = _detect_is_causal(tgt_mask, tgt_is_causal,
                                          _seq_len(tgt, self.layers[0].self_attn.batch_first))
        for mod in self.layers:
            out = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return self.norm(out) if self.norm is not None else out


class Transformer(Module):
    """Encoder-decoder Transformer (Vaswani et al.) built from the layers above."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", custom_encoder=None, custom_decoder=None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, bias, **kw)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False) -> Tensor:
        self._check_inputs(src, tgt)
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    def _check_inputs(self, src: Tensor, tgt: Tensor) -> None:
        """torch's up-front checks: equal batch sizes (batched inputs), features of d_model."""
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """An (sz, sz) float mask: -inf above the diagonal, 0 elsewhere."""
        return E.triu(E.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)
