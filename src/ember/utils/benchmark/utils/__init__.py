"""The benchmark utilities, laid out as PyTorch's `torch.utils.benchmark.utils` (so a
Measurement's class path, in its repr and its pickles, is the same)."""
