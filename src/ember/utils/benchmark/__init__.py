"""ember.utils.benchmark: PyTorch's `torch.utils.benchmark`, timing statements with
replicates: `Timer` (`timeit`, `blocked_autorange`, `adaptive_autorange`) gives a
`Measurement` (mean, median, IQR, printed as PyTorch prints it), and `Compare` lays many out
as one table."""

from .utils.common import Measurement, TaskSpec, select_unit
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer",
           "select_unit"]
