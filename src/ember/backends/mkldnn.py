"""torch.backends.mkldnn's flags (ember computes through NumPy's BLAS)."""

enabled = True


def is_available() -> bool:
    return False
