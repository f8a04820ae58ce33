"""The table of PyTorch's node classes and their `_saved_*` attributes: for each class, each
attribute's name and where an ember node keeps its value (read by `saved_attrs`).

A source in the table is one of:
- `aN`: tensor input N as saved (None where the derivative did not need it, as PyTorch
  saves an undefined tensor there); `nN`: number input N (a Scalar in PyTorch's signature,
  so no `_raw_saved_` SavedTensor);
- `r` / `rN`: output 0 / N as saved;
- `p.NAME` or `p.NAME|DEFAULT`: the static parameter NAME (DEFAULT when not recorded);
  `p.NAME!0`: its first element (a one-dim op whose parameter is a tuple of dims here);
  `p.NAME!i`: an integral float shown as an int; `p.NAME!u`: an int shown as PyTorch's int64
  reads as unsigned (None as -1, PyTorch's "none": embedding's padding_idx); `p.NAME!r`: a
  loss's reduction as PyTorch's enum (none 0, mean 1, sum 2);
- `keyN`: an indexing op's tensor indices, in its key's order (None for each whole dim),
  the index tensors being its inputs from N on;
- `szN`: the shape of input N (`_saved_self_sym_sizes`), `numel0` input 0's element count,
  `ndN` its number of dims;
- `f.NAME`: a value PyTorch's kernel computed and kept where ember's rule recomputes it from
  what the node holds (nll_loss's `total_weight`, a convolution's `output_padding`):
  `saved_attrs._DERIVED[NAME](node)`, gone after backward where it reads a saved tensor.
"""

# (nodes whose only saved value is the input's shape: PyTorch's views and sums)
_SIZES = "self_sym_sizes=sz0"
_SELF = "self=a0"
_RESULT = "result=r"
_NLL = "ignore_index=p.ignore_index!u reduction=p.reduction!r self=a0 target=a1 " \
    "total_weight=f.nll_total_weight weight=a2"
# NOTE: PyTorch's max_pool shows `stride` as given, () where the caller gave None; the
# primitive keeps the stride it runs, so the shown one is that
_MAX_POOL = "ceil_mode=p.ceil_mode dilation=p.dilation kernel_size=p.kernel padding=p.padding " \
    "result1=r1 self=a0 stride=p.stride"
_GRID = "align_corners=p.align grid=a1 input=a0 interpolation_mode=p.mode padding_mode=p.padding"

TABLE_SPEC = {
    # binary arithmetic
    "AddBackward0": "alpha=p.alpha|1",
    "SubBackward0": "alpha=p.alpha|1",
    "RsubBackward1": "alpha=p.alpha|1",
    "MulBackward0": "other=a1 self=a0",
    "DivBackward0": "other=a1 self=a0",
    "PowBackward0": "exponent=n1 self=a0",
    "PowBackward1": "exponent=a1 result=r self=a0",
    "PowBackward2": "exponent=a1 result=r self=n0",
    "MinimumBackward0": "other=a1 self=a0",
    "MaximumBackward0": "other=a1 self=a0",
    "FminBackward0": "other=a1 self=a0",
    "FmaxBackward0": "other=a1 self=a0",
    "Atan2Backward0": "other=a1 self=a0",
    "HypotBackward0": "other=a1 result=r self=a0",
    "XlogyBackward0": "other=a1 self=a0",
    "LogaddexpBackward0": "other=a1 self=a0",
    "AddcmulBackward0": "tensor1=a1 tensor2=a2 value=p.value|1",
    "AddcdivBackward0": "tensor1=a1 tensor2=a2 value=p.value|1",
    "LerpBackward0": "weight=n2",
    "LerpBackward1": "end=a1 self=a0 weight=a2",
    "FmodBackward1": "other=a1 self=a0",
    "RemainderBackward1": "other=a1 self=a0",
    "LdexpBackward0": "other=a1 result=r",
    "WhereBackward0": "condition=a0",
    "ClampBackward1": "max=n2 min=n1 self=a0",
    "ClampBackward0": "max=a2 min=a1 self=a0",
    "ClampMinBackward0": "min=n1 self=a0",
    "ClampMaxBackward0": "max=n1 self=a0",
    "DivBackward2": "other=a1 rounding_mode=f.rounding_mode self=a0",
    "RsubBackward0": "alpha=p.alpha|1",
    "VdotBackward0": "other=a1 self=a0",
    "SpecialXlog1PyBackward0": "other=a1 self=a0",
    "PolygammaBackward0": "n=p.n self=a0",
    "MvlgammaBackward0": "p=p.p self=a0",
    # unary math: what each derivative reads
    "ExpBackward0": _RESULT, "Exp2Backward0": _RESULT, "Expm1Backward0": _RESULT,
    "SqrtBackward0": _RESULT, "RsqrtBackward0": _RESULT, "ReciprocalBackward0": _RESULT,
    "TanhBackward0": _RESULT, "SigmoidBackward0": _RESULT, "ReluBackward0": _RESULT,
    "SgnBackward0": "result=r self=a0",
    "LogBackward0": _SELF, "Log2Backward0": _SELF, "Log10Backward0": _SELF,
    "Log1PBackward0": _SELF, "SinBackward0": _SELF, "CosBackward0": _SELF,
    "TanBackward0": _RESULT, "SinhBackward0": _SELF, "CoshBackward0": _SELF,
    "AsinBackward0": _SELF, "AcosBackward0": _SELF, "AtanBackward0": _SELF,
    "AsinhBackward0": _SELF, "AcoshBackward0": _SELF, "AtanhBackward0": _SELF,
    "AbsBackward0": _SELF, "ErfBackward0": _SELF, "ErfinvBackward0": _SELF,
    "ErfcBackward0": _SELF, "SpecialEntrBackward0": _SELF, "SpecialNdtriBackward0": _RESULT,
    "SpecialI1Backward0": "result=r self=a0", "SpecialI0EBackward0": "result=r self=a0",
    "SpecialI1EBackward0": "result=r self=a0", "SpecialErfcxBackward0": "result=r self=a0",
    "SpecialLogNdtrBackward0": "result=r self=a0",
    "LgammaBackward0": _SELF, "DigammaBackward0": _SELF, "I0Backward0": _SELF,
    "SincBackward0": _SELF, "AngleBackward0": _SELF, "NanToNumBackward0": _SELF,
    "LogSigmoidBackward0": "buffer=f.logsigmoid_buffer self=a0",
    "SiluBackward0": _SELF, "MishBackward0": _SELF, "HardswishBackward0": _SELF,
    "HardsigmoidBackward0": _SELF, "SignBackward0": "", "NegBackward0": "",
    "FloorBackward0": "", "CeilBackward0": "", "RoundBackward0": "", "TruncBackward0": "",
    "FracBackward0": "", "ConjBackward0": "", "CloneBackward0": "",
    "LogitBackward0": "eps=p.eps self=a0",
    "ThresholdBackward0": "self=a0 threshold=p.threshold",
    "CeluBackward0": "alpha=p.alpha self=a0",
    "GeluBackward0": "approximate=p.approximate|none self=a0",
    "LeakyReluBackward0": "negative_slope=p.negative_slope self=a0",
    # (F.elu / F.selu pass PyTorch's kernel an int 1 where a scale is 1: `!i` shows an
    # integral float parameter as an int)
    "EluBackward0": "alpha=p.alpha input_scale=p.input_scale!i scale=p.scale!i self=a0",
    "SoftplusBackward0": "beta=p.beta self=a0 threshold=p.threshold",
    "HardtanhBackward0": "max_val=p.max_val min_val=p.min_val self=a0",
    "SoftmaxBackward0": "dim=p.dim result=r",
    "LogSoftmaxBackward0": "dim=p.dim result=r",
    # (PyTorch's C++ `tensor * double`: the Scalar overloads, a mul / div by a number renamed)
    "MulBackward1": "other=n1", "DivBackward1": "other=n1",
    # reductions
    "SumBackward0": _SIZES,
    "SumBackward1": "dim=p.dims keepdim=p.keepdim " + _SIZES,
    "MeanBackward0": "self_sym_numel=numel0 " + _SIZES,
    "MeanBackward1": "dim=p.dims keepdim=p.keepdim self_sym_numel=numel0 " + _SIZES,
    "ProdBackward0": "result=r self=a0",
    "ProdBackward1": "dim=p.dims!0 keepdim=p.keepdim result=r self=a0",
    "MaxBackward1": "result=r self=a0",
    "MinBackward1": "result=r self=a0",
    "MaxBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "MinBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "MedianBackward1": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "ModeBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "KthvalueBackward0": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "SortBackward0": "dim=p.dim indices=r1 " + _SIZES,
    "SortBackward1": "dim=p.dim indices=r1 " + _SIZES,
    "TopkBackward0": "dim=p.dim indices=r1 " + _SIZES,
    "AmaxBackward0": "dim=p.dims keepdim=p.keepdim result=r self=a0",
    "AminBackward0": "dim=p.dims keepdim=p.keepdim result=r self=a0",
    "MedianBackward0": "result=r self=a0",
    "NanmedianBackward0": "result=r self=a0",
    "LogsumexpBackward0": "dim=p.dims keepdim=p.keepdim result=r self=a0",
    "NansumBackward0": "dim=p.dims keepdim=p.keepdim self=a0",
    "NanmedianBackward1": "dim=p.dim indices=r1 keepdim=p.keepdim " + _SIZES,
    "VarBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim self=a0",
    "StdBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim result=r self=a0",
    "VarMeanBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim self=a0",
    "StdMeanBackward0": "correction=p.correction dim=p.dims keepdim=p.keepdim result0=r0 "
                        "self=a0",
    "LinalgVectorNormBackward0": "dim=p.dims keepdim=p.keepdim ord=p.ord result=r self=a0",
    # (at::norm where PyTorch calls it: a vector norm renamed)
    "NormBackward1": "dim=p.dims keepdim=p.keepdim p=p.ord result=r self=a0",
    "CumsumBackward0": "dim=p.dim",
    "CumprodBackward0": "dim=p.dim result=r self=a0",
    "LogcumsumexpBackward0": "dim=p.dim result=r self=a0",
    "CummaxBackward0": "dim=p.dim indices=r1 self=a0",
    "CumminBackward0": "dim=p.dim indices=r1 self=a0",
    # linear algebra
    # (PyTorch's `*_sym_strides`, an input's strides when it needs a gradient, are not
    # kept here: those nodes show no such attribute)
    "MmBackward0": "mat2=a1 mat2_sym_sizes=sz1 self=a0 self_sym_sizes=sz0",
    "BmmBackward0": "mat2=a1 self=a0",
    "MvBackward0": "self=a0 vec=a1",
    "DotBackward0": "self=a0 tensor=a1",
    "AddmmBackward0": "alpha=p.alpha|1 beta=p.beta|1 mat1=a1 mat1_sym_sizes=sz1 mat2=a2 "
                      "mat2_sym_sizes=sz2",
    "AddmvBackward0": "alpha=p.alpha|1 beta=p.beta|1 mat=a1 vec=a2",
    "AddbmmBackward0": "alpha=p.alpha|1 batch1=a1 batch1_sym_argsize_0=sz1.0 "
                       "batch1_sym_argsize_1=sz1.1 batch2=a2 batch2_sym_argsize_2=sz2.2 "
                       "beta=p.beta|1",
    "BaddbmmBackward0": "alpha=p.alpha|1 batch1=a1 batch2=a2 beta=p.beta|1",
    "AddrBackward0": "alpha=p.alpha|1 beta=p.beta|1 vec1=a1 vec2=a2",
    "LinalgCrossBackward0": "dim=p.dim other=a1 self=a0",
    # (`left=False` is a transpose of the left solve here: that node shows none of these)
    "LinalgInvExBackward0": "inverse=r",
    "LinalgCholeskyExBackward0": "L=r upper=p.upper",
    "LinalgQrBackward0": "Q=r0 R=r1 mode=p.mode",
    "LinalgSvdBackward0": "S=r1 S_sym_argsize_minus_1=f.svd_k U=r0 Vh=r2 "
                          "full_matrices=p.full_matrices",
    "LinalgEighBackward0": "eigenvalues=r0 eigenvectors=r1",
    "LinalgPinvBackward0": "result=r self=a0",
    "LinalgLstsqBackward0": "b=a1 self=a0 solution=r",
    "LinalgSolveTriangularBackward0": "left=p.left|True result=r self=a0 "
                                      "unitriangular=p.unit upper=p.upper",
    "LinalgMatrixExpBackward0": _SELF,
    # (ember's rules do not factor A again: its LU factors are worked from A when read)
    "LinalgDetBackward0": "A=a0 LU=f.det_lu pivots=f.det_lu_pivots result=r",
    "LinalgSlogdetBackward0": "A=a0 LU=f.det_lu pivots=f.det_lu_pivots sign=r0",
    "LinalgLuFactorExBackward0": "LU=r0 pivot=p.pivot|True pivots=r1",
    "LinalgSolveExBackward0": "A=a0 LU=f.lu pivots=f.lu_pivots left=p.left|True result=r",
    "TraceBackward0": _SIZES,
    # views and copies
    "ViewBackward0": _SIZES, "UnsafeViewBackward0": _SIZES, "ExpandBackward0": _SIZES,
    "ReshapeAliasBackward0": _SIZES,
    "ConstantPadNdBackward0": "pad=f.pad",
    "SqueezeBackward0": _SIZES, "SqueezeBackward1": "dim=p.dims!0 " + _SIZES,
    "SqueezeBackward2": "dim=p.dims " + _SIZES,
    "UnsqueezeBackward0": "dim=p.dim",
    "TransposeBackward0": "dim0=p.dim0 dim1=p.dim1",
    # (the in-place views: squeeze_(), squeeze_(d), squeeze_(dims), unsqueeze_, transpose_)
    "SqueezeBackward3": _SIZES, "SqueezeBackward4": "dim=p.dims!0 " + _SIZES,
    "SqueezeBackward5": "dim=p.dims " + _SIZES,
    "UnsqueezeBackward1": "dim=p.dim",
    "TransposeBackward1": "dim0=p.dim0 dim1=p.dim1",
    "PermuteBackward0": "dims=p.dims",
    "SelectBackward0": "dim=p.dim index=p.index " + _SIZES,
    "UnbindBackward0": "dim=p.dim",
    "SplitBackward0": "dim=p.dim self_sym_sizes=sz0 split_size=p.split_size",
    "SplitWithSizesBackward0": "dim=p.dim self_sym_sizes=sz0 split_sizes=p.split_sizes",
    "UnsafeSplitBackward0": "dim=p.dim self_sym_sizes=sz0 split_size=p.split_size",
    "UnsafeSplitWithSizesBackward0": "dim=p.dim self_sym_sizes=sz0 split_sizes=p.split_sizes",
    "SliceBackward0": "dim=p.dim end=p.stop " + _SIZES + " start=p.start step=p.step",
    "FlipBackward0": "dims=p.dims",
    "RollBackward0": "dims=p.dims shifts=p.shifts",
    "RepeatBackward0": "repeats=p.reps " + _SIZES,
    "TriuBackward0": "diagonal=p.diagonal",
    "TrilBackward0": "diagonal=p.diagonal",
    "DiagonalBackward0": "dim1=p.dim1 dim2=p.dim2 offset=p.offset_ " + _SIZES,
    "UnfoldBackward0": "dimension=p.dim " + _SIZES + " size=p.size step=p.step",
    "AsStridedBackward0": "size=p.size storage_offset=p.storage_offset stride=p.stride_",
    "AsStridedBackward1": "size=p.size storage_offset=p.storage_offset stride=p.stride_",
    "DiagEmbedBackward0": "dim1=p.dim1 dim2=p.dim2 offset=p.offset",
    "CatBackward0": "dim=p.dim",
    "StackBackward0": "dim=p.dim",
    # indexing
    "GatherBackward0": "dim=p.dim index=a1 self=a0 sparse_grad=p.sparse_grad|False",
    "MaskedFillBackward0": "mask=a1",
    "MaskedSelectBackward0": "mask=a1 self=a0",
    "ScatterBackward0": "dim=p.dim index=a1",
    "ScatterBackward1": "dim=p.dim index=a1",
    "ScatterAddBackward0": "dim=p.dim index=a1",
    "IndexAddBackward0": "alpha=p.alpha|1 dim=p.dim index=a1 source=a2 source_dim=nd2",
    "IndexCopyBackward0": "dim=p.dim index=a1 source=a2 source_dim=nd2",
    "IndexFillBackward0": "dim=p.dim index=a1",
    "IndexFillBackward1": "dim=p.dim index=a1",
    "ScatterReduceBackward0": "dim=p.dim include_self=p.include_self index=a1 reduce=p.reduce "
                              "result=r self=a0 src=a2",
    "MaskedScatterBackward0": "mask=a1 source_sym_sizes=sz2",
    "EmbeddingBackward0": "indices=a1 padding_idx=p.padding_idx!u "
                          "scale_grad_by_freq=p.scale_grad_by_freq sparse=p.sparse|False "
                          "weight_sym_argsize_0=sz0.0",
    # losses
    "MseLossBackward0": "reduction=p.reduction!r self=a0 target=a1",
    "SmoothL1LossBackward0": "beta=p.beta reduction=p.reduction!r self=a0 target=a1",
    "HuberLossBackward0": "delta=p.delta reduction=p.reduction!r self=a0 target=a1",
    "BinaryCrossEntropyBackward0": "reduction=p.reduction!r self=a0 target=a1 weight=a2",
    # (with_logits's primitive has no weights: the weighted forms are composites)
    "BinaryCrossEntropyWithLogitsBackward0": "pos_weight=f.absent reduction=p.reduction!r "
                                             "self=a0 target=a1 weight=f.absent",
    "SoftMarginLossBackward0": "reduction=p.reduction!r self=a0 target=a1",
    "NllLossBackward0": _NLL, "NllLoss2DBackward0": _NLL,
    # normalisation, convolution, pooling and sampling kernels
    # (ember's kernel keeps the normalised input and rstd: the mean is worked from the input)
    "NativeLayerNormBackward0": "bias=a2 input=a0 normalized_shape=f.normalized_shape "
                                "result1=f.layer_norm_mean result2=r2 weight=a1",
    # (training only: the batch statistics are outputs 2 and 4; the running statistics the
    # call updates are the ones F.batch_norm has the node keep, `saves`)
    "NativeBatchNormBackward0": "eps=p.eps input=a0 result1=r2 result2=r4 "
                                "running_mean=f.running_mean running_var=f.running_var "
                                "training=p.training|True weight=a1",
    "ConvolutionBackward0": "bias_sym_sizes_opt=f.conv_bias_sizes dilation=p.dilation "
                            "groups=p.groups input=a0 output_padding=f.conv_output_padding "
                            "padding=f.conv_padding stride=p.stride transposed=p.transposed|False "
                            "weight=a1",
    "MaxPool2DWithIndicesBackward0": _MAX_POOL, "MaxPool3DWithIndicesBackward0": _MAX_POOL,
    "AdaptiveMaxPool2DBackward0": "result1=r1 self=a0",
    "AdaptiveMaxPool3DBackward0": "result1=r1 self=a0",
    "GridSampler2DBackward0": _GRID, "GridSampler3DBackward0": _GRID,
    # (index_select is ember's indexing primitive with a key: its dim is the one given)
    "IndexSelectBackward0": "dim=p.dim index=a1 " + _SIZES,
    "IndexBackward0": "indices=key1 " + _SIZES,
    "IndexPutBackward0": "accumulate=p.accumulate indices=key2",
}
