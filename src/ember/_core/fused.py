"""The primitives that fuse what could be composed from smaller ones, and why each does.

Everything else that is not one piece of math should be a composition; this list is
the one place that says which fused kernels exist and what they buy.
"""

FUSED = {
    "softmax": "one max-shifted pass per row: composed exp / sum loses range and is 3x "
               "slower; with log=True (log_softmax) the log-sum-exp shift in the same pass, "
               "where composed log(softmax) underflows to -inf",
    "softmax_backward_data": "y * (g - sum(g * y)), or with log=True g - exp(y) * sum(g), "
                             "in one pass over each row",
    "nll_loss": "ignore_index, class weights and the weighted mean in one gather",
    "nll_loss_backward": "the scatter of -weight / total without a dense one-hot",
    "nll_log_softmax_backward": "cross_entropy's backward in compiled graphs: "
                                "softmax_backward_data of nll_loss_backward in one pass, "
                                "the one-hot never written (and, given the logits, "
                                "log_softmax's output computed in registers), eager's bits",
    "native_layer_norm": "mean, variance and the affine in one kernel; saves xhat and rstd "
                         "(and, as PyTorch's node, the input, weight and bias)",
    "native_layer_norm_backward": "one joint VJP for input, weight and bias",
    "native_group_norm": "each (sample, group)'s statistics in one pass and the affine per "
                         "channel in another (composed: layer norm's node, a mul and an add); "
                         "saves, as PyTorch's node, the input and weight, and mean and rstd",
    "native_group_norm_backward": "one joint VJP for input, weight and bias: per-(sample, "
                                  "channel) sums of g and g x, then dx in one pass",
    "native_batch_norm": "batch statistics, normalise and affine in three chunked passes "
                         "(composed: about ten); saves xhat and 1/std (and, as PyTorch's "
                         "node, the input and weight)",
    "native_batch_norm_backward": "one joint VJP for input, weight and bias in three passes",
    "convolution": "im2col products through BLAS over cache-sized chunks, or Winograd's "
                   "F(2x2, 3x3) (4/9 of the multiplications) for 3x3 stride-1 kernels; "
                   "composed unfold + matmul doubles memory",
    "convolution_backward_input": "the transposed convolution: a full convolution or a "
                                  "product and col2im",
    "convolution_backward_weight": "the weight gradient as products summed over chunks "
                                   "(Winograd's adjoint for 3x3 stride-1 kernels)",
    "scaled_dot_product_attention": "scores, mask, softmax and the value product without "
                                    "keeping every intermediate",
    "scaled_dot_product_attention_backward": "one joint VJP for query, key and value",
    "addmm": "bias + matrix product in one BLAS call (nn.Linear's forward)",
    "max_pool_with_indices": "a running maximum over the window taps' strided views and "
                             "the first winning tap, torch's tie and NaN rules, without "
                             "window copies",
    "max_pool_backward": "a scatter through the saved indices",
    "embedding_backward": "an index_add with padding_idx and scale_grad_by_freq",
    "ctc_loss": "the alpha recursion over time is a loop no composition expresses",
    "ctc_loss_backward": "the beta recursion, sharing the forward's alphas",
    "lstm_cell": "nn.LSTM's step after its two products, one node for (h', c') as PyTorch's "
                 "oneDNN layer is one: about 12 op calls and 12 nodes per step in Python "
                 "otherwise (3x the layer's time), the composite's bits",
    "pointwise_loss": "each loss and its reduction in one pass (one node, PyTorch's name); "
                      "binary_cross_entropy_with_logits as a stable log-sigmoid (no "
                      "log(1 - sigmoid))",
    "grid_sampler": "each point's 4, 8 or 16 taps gathered and weighted in one pass, rounded "
                    "as torch's kernel rounds (composed: a dozen (N, C, P) temporaries)",
    "grid_sampler_backward": "one joint VJP for input and grid sharing the gathers",
}
