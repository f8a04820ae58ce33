"""ember.utils.tensorboard: `SummaryWriter`, as `torch.utils.tensorboard` has it.

It needs the `tensorboard` package, an optional extra: `pip install -e ".[tensorboard]"`.
Without it, importing this module raises what PyTorch's raises (No module named
'tensorboard').
"""

import tensorboard


def _version(text: str) -> tuple:
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


if _version(getattr(tensorboard, "__version__", "0")) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
