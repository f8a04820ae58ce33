"""`torch.fx.experimental`: graph passes torch ships outside the stable fx API."""


def __getattr__(name: str):
    from ...compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
