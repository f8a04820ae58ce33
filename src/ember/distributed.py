"""ember.distributed: ember has no process groups; this answers as a build without them."""


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False
