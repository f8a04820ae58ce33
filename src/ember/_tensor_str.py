"""torch._tensor_str's face: the print options some programs read or save and restore
(`PRINT_OPTS`, `get_printoptions`, `printoptions`); the printing itself is `_printing`."""

from ._printing import OPTS as PRINT_OPTS
from ._printing import get_printoptions, printoptions, set_printoptions

__all__ = ["PRINT_OPTS", "get_printoptions", "printoptions", "set_printoptions"]
