"""`torch.quasirandom.SobolEngine`: scrambled and unscrambled Sobol' sequences.

PyTorch's engine, bit for bit: the direction numbers of Joe & Kuo (new-joe-kuo-6.21201,
search criterion D(6)) expanded to 30-bit integers, Gray-code order (point i+1 is point i
XOR the direction number of the rightmost zero bit of i), and Owen's linear matrix
scrambling with a random digital shift, both drawn with `randint` from a `Generator`
seeded with `seed` (so a seeded engine draws torch's points). ember carries the first
`MAXDIM` dimensions of the table (torch carries all 21,201), in sobol_directions.py.
"""

from __future__ import annotations

import numpy as np

from . import _dtype as dt
from ._tensor import Tensor, _wrap
from .sobol_directions import directions

_MAXBIT = 30
_TORCH_MAXDIM = 21201


def _direction_numbers(dimension: int) -> np.ndarray:
    """The (dimension, 30) int64 table torch's `_sobol_engine_initialize_state_` fills:
    row d holds v_{d,j} << (29 - j), v from the primitive polynomial's recurrence."""
    v = np.zeros((dimension, _MAXBIT), dtype=np.int64)
    v[0] = 1  # dimension 1: the van der Corput sequence
    rows = directions()
    for d in range(1, dimension):
        poly, *init = rows[d - 1]
        m = poly.bit_length() - 1  # the polynomial's degree
        v[d, :m] = init
        for j in range(m, _MAXBIT):
            new = int(v[d, j - m])
            for k in range(m):
                if (poly >> (m - 1 - k)) & 1:
                    new ^= int(v[d, j - k - 1]) << (k + 1)
            v[d, j] = new
    return v << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)


def _rightmost_zero(counts: np.ndarray) -> np.ndarray:
    """The index of the lowest zero bit of each count (the Gray-code column)."""
    low = ~counts & (counts + 1)  # that bit alone
    return np.frexp(low.astype(np.float64))[1] - 1


def _scrambled(state: np.ndarray, ltm: np.ndarray) -> np.ndarray:
    """torch's `_sobol_engine_scramble_`: each direction number multiplied over GF(2) by
    the dimension's lower-triangular matrix (unit diagonal); bit p of the matrix row
    pairs with bit 29 - p of the number."""
    ltm = ltm.copy()
    ltm[:, np.arange(_MAXBIT), np.arange(_MAXBIT)] = 1
    shifts = np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)
    bits = (state[:, :, None] >> shifts) & 1  # (dim, j, k): bit 29 - k of v_{d,j}
    parity = np.einsum("djk,dpk->djp", bits, ltm) & 1
    return (parity << shifts).sum(-1)


class SobolEngine:
    r"""An engine for (scrambled) Sobol' sequences, as `torch.quasirandom.SobolEngine`.

    Args:
        dimension: the dimensionality of the points, in [1, MAXDIM].
        scramble: apply Owen's linear matrix scrambling and a random digital shift.
        seed: seed of the `Generator` the scrambling draws from (the global one if None).
    """

    MAXBIT = _MAXBIT
    MAXDIM = _TORCH_MAXDIM

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(
                "Supported range of dimensionality "
                f"for SobolEngine is [1, {self.MAXDIM}]"
            )
        if dimension > _EMBER_MAXDIM:
            raise NotImplementedError(
                f"ember's SobolEngine carries Joe & Kuo's direction numbers for dimensions up "
                f"to {_EMBER_MAXDIM} (torch carries {self.MAXDIM}); got dimension={dimension}"
            )
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.sobolstate = _wrap(_direction_numbers(dimension))
        if not self.scramble:
            self.shift = _wrap(np.zeros(dimension, dtype=np.int64))
        else:
            self._scramble()
        self.quasi = self.shift.clone()
        self._first_point = (self.quasi / 2**self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _advance(self, n: int, num_generated: int) -> np.ndarray:
        """The next `n` integer points after `self.quasi` (the last becomes `self.quasi`)."""
        state = self.sobolstate.numpy()
        cols = _rightmost_zero(np.arange(num_generated, num_generated + n, dtype=np.int64))
        points = np.bitwise_xor.accumulate(state[:, cols].T, axis=0) ^ self.quasi.numpy()
        if n > 0:
            self.quasi = _wrap(points[-1].copy())
        return points

    def _draw(self, n: int, num_generated: int, dtype) -> Tensor:
        if dtype not in (dt.float32, dt.float64):
            name = dt.SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)
            raise NotImplementedError(f"\"_sobol_engine_draw\" not implemented for '{name}'")
        np_dtype = np.float32 if dtype is dt.float32 else np.float64
        points = self._advance(n, num_generated).astype(np_dtype)
        return _wrap(points * np_dtype(1.0 / (1 << self.MAXBIT)), dtype)

    def draw(self, n: int = 1, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next `n` points, shape (n, dimension); they depend on the points drawn so far."""
        from .ops.join import cat

        if dtype is None:
            dtype = dt.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                result = self._draw(n - 1, self.num_generated, dtype)
                result = cat((self._first_point.to(dtype), result), dim=-2)
        else:
            result = self._draw(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next 2**m points; the total drawn must stay a power of 2 (the balance
        properties of Sobol' points hold only for such prefixes)."""
        n = 2**m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead."
            )
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip `n` points, as drawing them would."""
        if self.num_generated == 0:
            self._advance(n - 1, self.num_generated)
        else:
            self._advance(n, self.num_generated - 1)
        self.num_generated += n
        return self

    def _scramble(self):
        from .ops.random_ops import randint
        from .random import Generator

        g = None
        if self.seed is not None:
            g = Generator()
            g.manual_seed(self.seed)
        # NOTE: the shift and the matrices are drawn in this order and these shapes, as
        # torch draws them, so that a seed gives torch's points.
        shift_ints = randint(2, (self.dimension, self.MAXBIT), generator=g).numpy()
        self.shift = _wrap(shift_ints @ (np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64)))
        ltm = np.tril(randint(2, (self.dimension, self.MAXBIT, self.MAXBIT), generator=g).numpy())
        self.sobolstate = _wrap(_scrambled(self.sobolstate.numpy(), ltm))

    def __repr__(self):
        fmt_string = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt_string += ["scramble=True"]
        if self.seed is not None:
            fmt_string += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt_string) + ")"


_EMBER_MAXDIM = 1023 + 1  # (sobol_directions.py: dimensions 2 to 1024)
