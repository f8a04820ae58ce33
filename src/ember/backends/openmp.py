"""torch.backends.openmp."""


def is_available() -> bool:
    return False
