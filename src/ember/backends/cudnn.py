"""torch.backends.cudnn's flags, for programs that set them; no cuDNN runs here."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None
