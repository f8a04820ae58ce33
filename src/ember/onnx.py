"""ember.onnx: importable, so programs that mention it run; exporting is not provided."""


def export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.export is not implemented in ember")


def is_in_onnx_export() -> bool:
    return False


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
