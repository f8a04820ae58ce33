"""The schemas of the ATen ops `torch.ops.aten` offers, in PyTorch's own text (the
interface a program matches against: `_schema` prints it, calls are checked against it)."""

SCHEMAS = (
    'aten::mm(Tensor self, Tensor mat2) -> Tensor',
    'aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,'
    ' Scalar alpha=1) -> Tensor',
    'aten::bmm(Tensor self, Tensor mat2) -> Tensor',
    'aten::matmul(Tensor self, Tensor other) -> Tensor',
    'aten::dot(Tensor self, Tensor tensor) -> Tensor',
    'aten::mv(Tensor self, Tensor vec) -> Tensor',
    'aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1,'
    ' Scalar alpha=1) -> Tensor',
    'aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1,'
    ' Scalar alpha=1) -> Tensor',
    'aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
    'aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    'aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor',
    'aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    'aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor',
    'aten::mul.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::mul.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::div.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::div.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor',
    'aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor',
    'aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    'aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor',
    'aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor',
    'aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor',
    'aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor',
    'aten::neg(Tensor self) -> Tensor',
    'aten::abs(Tensor self) -> Tensor',
    'aten::sqrt(Tensor self) -> Tensor',
    'aten::rsqrt(Tensor self) -> Tensor',
    'aten::relu(Tensor self) -> Tensor',
    'aten::gelu(Tensor self, *, str approximate="none") -> Tensor',
    'aten::silu(Tensor self) -> Tensor',
    'aten::sigmoid(Tensor self) -> Tensor',
    'aten::tanh(Tensor self) -> Tensor',
    'aten::exp(Tensor self) -> Tensor',
    'aten::log(Tensor self) -> Tensor',
    'aten::sin(Tensor self) -> Tensor',
    'aten::cos(Tensor self) -> Tensor',
    'aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor',
    'aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *,'
    ' ScalarType? dtype=None) -> Tensor',
    'aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor',
    'aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *,'
    ' ScalarType? dtype=None) -> Tensor',
    'aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor',
    'aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor',
    'aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None,'
    ' bool keepdim=False) -> Tensor',
    'aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor',
    'aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor',
    'aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor',
    'aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor',
    'aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)',
    'aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)',
    'aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)',
    'aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor',
    'aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)',
    'aten::t(Tensor(a) self) -> Tensor(a)',
    'aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)',
    'aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)',
    'aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor',
    'aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)',
    'aten::detach(Tensor(a) self) -> Tensor(a)',
    'aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)',
    'aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)',
    'aten::squeeze(Tensor(a) self) -> Tensor(a)',
    'aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)',
    'aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None,'
    ' SymInt step=1) -> Tensor(a)',
    'aten::cat(Tensor[] tensors, int dim=0) -> Tensor',
    'aten::stack(Tensor[] tensors, int dim=0) -> Tensor',
    'aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]',
    'aten::index_select(Tensor self, int dim, Tensor index) -> Tensor',
    'aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor',
    'aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor',
    'aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor',
    'aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor',
    'aten::scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *,'
    ' str reduce) -> Tensor',
    'aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor',
    'aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *,'
    ' bool include_self=True) -> Tensor',
    'aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor',
    'aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1,'
    ' bool scale_grad_by_freq=False, bool sparse=False) -> Tensor',
    'aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,'
    ' SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,'
    ' SymInt groups) -> Tensor',
    'aten::_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,'
    ' SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,'
    ' SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled,'
    ' bool allow_tf32) -> Tensor',
    'aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight,'
    ' SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation,'
    ' bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor,'
    ' Tensor, Tensor)',
    'aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight,'
    ' Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)',
    'aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,'
    ' Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor,'
    ' Tensor)',
    'aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)',
    'aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value,'
    ' Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None,'
    ' bool enable_gqa=False) -> Tensor',
    'aten::_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value,'
    ' float dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None,'
    ' float? scale=None) -> (Tensor output, Tensor logsumexp)',
    'aten::_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query,'
    ' Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal,'
    ' *, Tensor? attn_mask=None, float? scale=None) -> (Tensor grad_query, Tensor grad_key,'
    ' Tensor grad_value)',
    'aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor',
    'aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor',
    'aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor',
    'aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor',
    'aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor',
    'aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor',
    'aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None) -> Tensor',
    'aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None) -> Tensor',
    'aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor',
    'aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None,'
    ' Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor',
    'aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None) -> Tensor',
    'aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None,'
    ' Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor',
    'aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None, bool non_blocking=False,'
    ' MemoryFormat? memory_format=None) -> Tensor',
    'aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor',
    'aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor',
    'aten::eq.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::eq.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::ne.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::ne.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::gt.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::gt.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::lt.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::lt.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor',
    'aten::clamp_min(Tensor self, Scalar min) -> Tensor',
    'aten::max(Tensor self) -> Tensor',
    'aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)',
    'aten::max.other(Tensor self, Tensor other) -> Tensor',
    'aten::min(Tensor self) -> Tensor',
    'aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)',
    'aten::min.other(Tensor self, Tensor other) -> Tensor',
    'aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor',
    'aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor',
    'aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor',
    'aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor',
    'aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor',
    'aten::log1p(Tensor self) -> Tensor',
    'aten::expm1(Tensor self) -> Tensor',
    'aten::reciprocal(Tensor self) -> Tensor',
    'aten::erf(Tensor self) -> Tensor',
    'aten::minimum(Tensor self, Tensor other) -> Tensor',
    'aten::maximum(Tensor self, Tensor other) -> Tensor',
    'aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor',
    'aten::tril(Tensor self, SymInt diagonal=0) -> Tensor',
    'aten::triu(Tensor self, SymInt diagonal=0) -> Tensor',
    'aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True,'
    ' bool sorted=True) -> (Tensor values, Tensor indices)',
    'aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)',
    'aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor',
    'aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor',
    'aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None,'
    ' Tensor? pos_weight=None, int reduction=1) -> Tensor',
    'aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction,'
    ' SymInt ignore_index) -> (Tensor output, Tensor total_weight)',
    'aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[],'
    ' int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)',
    'aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,'
    ' bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor',
    'aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C,'
    ' SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)',
    'aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)',
    'aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
    'aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)',
    'aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
    'aten::bernoulli_.float(Tensor(a!) self, float p=0.5, *,'
    ' Generator? generator=None) -> Tensor(a!)',
    'aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)',
    'aten::zero_(Tensor(a!) self) -> Tensor(a!)',
    'aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor',
    'aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor',
    'aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor',
    'aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None,'
    ' Layout? layout=None, Device? device=None, bool? pin_memory=None,'
    ' MemoryFormat? memory_format=None) -> Tensor',
    'aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor',
    'aten::repeat(Tensor self, SymInt[] repeats) -> Tensor',
    'aten::flip(Tensor self, int[] dims) -> Tensor',
    'aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor',
    'aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]',
    'aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)',
    'aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)',
    'aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values,'
    ' bool accumulate=False) -> Tensor(a!)',
    'aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *,'
    ' Scalar alpha=1) -> Tensor',
    'aten::rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None) -> Tensor',
    'aten::randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,'
    ' Device? device=None, bool? pin_memory=None) -> Tensor',
    'aten::alias(Tensor(a) self) -> Tensor(a)',
    'aten::ge.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::ge.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::le.Scalar(Tensor self, Scalar other) -> Tensor',
    'aten::le.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor',
    'aten::bitwise_not(Tensor self) -> Tensor',
    'aten::logical_not(Tensor self) -> Tensor',
    'aten::logical_and(Tensor self, Tensor other) -> Tensor',
    'aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor',
    'aten::any(Tensor self) -> Tensor',
    'aten::all(Tensor self) -> Tensor',
    'aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor',
    'aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor',
    'aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None,'
    ' bool keepdim=False) -> Tensor',
    'aten::nonzero(Tensor self) -> Tensor',
)
