"""torch.backends.cpu: what the CPU supports (NumPy picks its own SIMD kernels)."""


def get_cpu_capability() -> str:
    return "DEFAULT"
