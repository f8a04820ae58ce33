"""ember.distributed: ember has no process groups; this answers as a build without them."""


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
