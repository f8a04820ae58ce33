"""Whether sparse constructors check their invariants (`check_sparse_tensor_invariants`).

PyTorch keeps one process-wide flag. Until a program sets it (enable, disable, the context
manager or decorator), it reads as off and the first constructor called without
`check_invariants=` (`sparse_coo_tensor`, `sparse_csr_tensor` and the other compressed
ones, also when an optimizer builds one) warns once per process that the checks are off
implicitly. Conversions (`to_sparse`) and ops building sparse results internally never warn.
"""

from __future__ import annotations

import threading

from .._user_warnings import warn_at_user

IMPLICIT_WARNING = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will "
    "occur when operating on a sparse tensor which violates the invariants, but checks incur "
    "performance overhead. To silence this warning, explicitly opt in or out. See "
    "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.")

_lock = threading.Lock()
_state: list = [None]  # None: never set (implicitly off); True / False: set by the program


def checks_invariants(check_invariants: bool | None) -> bool:
    """What a constructor's `check_invariants=` resolves to: its own value when given, else
    the process flag, warning once (at the user's line) while that was never set."""
    if check_invariants is not None:
        return bool(check_invariants)
    state = _state[0]
    if state is None:
        warn_at_user(IMPLICIT_WARNING, once=True)
        return False
    return state


def _set(enabled: bool) -> None:
    with _lock:
        _state[0] = bool(enabled)


class check_sparse_tensor_invariants:
    """Turn the invariant checks of sparse tensor constructors on or off: by
    `enable()` / `disable()`, as a context manager (`with check_sparse_tensor_invariants():`)
    or as a decorator. A constructor's own `check_invariants=` overrides it."""

    @staticmethod
    def is_enabled() -> bool:
        """Whether constructors check invariants (False until enabled; asking is no opting
        out: the implicit warning still follows)."""
        return bool(_state[0])

    @staticmethod
    def enable() -> None:
        """Check invariants in every sparse constructor from now on."""
        _set(True)

    @staticmethod
    def disable() -> None:
        """Stop checking invariants (and the warning that they are off implicitly)."""
        _set(False)

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved_state: bool | None = None

    def __enter__(self) -> None:
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a "
                               "different context manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        _set(self.state)

    def __exit__(self, *exc) -> None:
        if self.saved_state is None:
            raise AssertionError("saved_state should not be None on exit")
        _set(self.saved_state)
        self.saved_state = None

    def __call__(self, mth):
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)

        return test_mth
