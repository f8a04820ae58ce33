"""The seam through which a compiled call's recording takes calls of ember's own code from
the graph it follows instead of running their Python (ember/graph/memo.py): a built-in
module's call, an optimizer's step. The layers that make those calls (nn, optim) read only
this; with no recording session anywhere, each call pays one attribute test for it."""

from __future__ import annotations


class _Memos:
    active = 0  # recording sessions, in any thread
    module_types: frozenset = frozenset()  # the module classes whose calls are memoised
    module_call = None  # (module, args, kwargs) -> the call's result
    optimizer_step = None  # (optimizer) -> None: the updates of a step


memos = _Memos()
