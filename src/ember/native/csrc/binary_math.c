/* binary_math.c: the elementwise ops of ops/binary_math.py (and binary.py's floor and
 * truncating division, float_parts.py's nextafter) that NumPy computes by a C library call
 * per element or in several passes, here in one vectorised pass with the same bits as
 * their NumPy twins (np.fmod; np.remainder with PyTorch's zero; np.floor_divide; np.hypot;
 * np.nextafter). Written once against scalar_t and FN(name); kernels.py compiles it for
 * float and double. The integer divisions sit at the end, once per unit.
 *
 * fmod (NumPy: the C library's, some 16 ns an element, ten times PyTorch's vectorised
 * time) is exact, so any correct fmod gives its bits; modulo_fast below says why this one
 * is. Lanes it does not take (a quotient too large, y zero, infinite or NaN, x infinite or
 * NaN) are done again with the C library's fmod after the vector loop. remainder and floor
 * division then take NumPy's steps (npy_divmod) from the fmod value in scalar_t
 * arithmetic, so they round as NumPy's do.
 *
 * Operands: `a` and `b` are read at a[i * as], b[i * bs] with steps 1 (whole, C order) or
 * 0 (one element for all), out is C order. Split over the kernel threads in chunks of at
 * least 16384 elements.
 */
#include "ember.h"
#include "ember_math.h"

#ifndef EMBER_MODULO_ONCE
#define EMBER_MODULO_ONCE
enum { MODULO_FMOD, MODULO_REMAINDER, MODULO_FLOOR_DIVIDE };
/* c ? a : b for scalar_t, both computed (ember_math.h: a select that stays a vector blend) */
#define MODULO_PICK(c, a, b) _Generic((a), float: ember_pickf, default: ember_pick)(c, a, b)
#define MODULO_LIBM(x, y) _Generic((x), float: fmodf, default: fmod)(x, y)
#define MODULO_WIDE (sizeof(scalar_t) == sizeof(double)) /* double: q y by fma */
#endif

typedef struct {
    const scalar_t *a, *b;
    scalar_t *out;
    int64_t as, bs;
    int op;
} FN(modulo_args);

/* x rounded to an integer (the nearest, ties to even) by the 1.5 * 2^52 shifter, for
 * |x| < 2^51 (ember_math.h's way: C's rint and trunc do not vectorise without
 * -fno-trapping-math); floor(x) one below where that came out above x. */
static inline double modulo_rint(double x) { return (x + 0x1.8p52) - 0x1.8p52; }

static inline double modulo_floor(double x) {
    const double n = modulo_rint(x);
    return ember_pick(n > x, n - 1.0, n);
}

/* fmod(x, y) where FN(modulo_slow) is false, computed in double: q = x / y rounded to the
 * nearest integer is the true quotient's integer part or one more in magnitude, so
 * |x - q y| < |y| and it is exact (float: q y exact, |q| <= 2^28; double: one fma); a
 * result of the wrong sign becomes the remainder by adding y with x's sign, exactly. */
static inline scalar_t FN(modulo_fast)(scalar_t xs, scalar_t ys) {
    const double x = xs, y = ys;
    const double q = modulo_rint(x / y);
    const double r0 = MODULO_WIDE ? fma(-q, y, x) : x - q * y;
    const int wrong = (r0 != 0.0) & ((r0 < 0.0) != (x < 0.0));
    const double r = ember_pick(wrong, r0 + copysign(y, x), r0);
    return (scalar_t)copysign(r, x);
}

/* The lanes fmod_fast does not take: |x / y| too large for it (and for modulo_floor), y
 * zero, infinite or NaN, x infinite or NaN. */
static inline int FN(modulo_slow)(scalar_t x, scalar_t y) {
    const double bound = MODULO_WIDE ? 0x1p50 : 0x1p28;
    const double q = (double)x / (double)y;
    return !(fabs(q) < bound) | !(fabs((double)y) < INFINITY);
}

/* remainder from m = fmod(x, y): NumPy's step (m + y where m is nonzero and its sign is
 * not y's), then PyTorch's zero, with x's sign. */
static inline scalar_t FN(modulo_remainder)(scalar_t m, scalar_t x, scalar_t y) {
    const int adj = (m != 0) & ((y < 0) != (m < 0));
    const scalar_t r = MODULO_PICK(adj, m + y, m);
    return MODULO_PICK(r == 0, copysign((scalar_t)0, x), r);
}

/* floor(x / y) from m = fmod(x, y), as npy_divmod: (x - m) / y, one less where m's sign is
 * not y's, then floored and rounded to the nearer integer; x / y where y is zero. */
static inline scalar_t FN(modulo_floor_divide)(scalar_t m, scalar_t x, scalar_t y, int libm) {
    const int adj = (m != 0) & ((y < 0) != (m < 0));
    scalar_t div = (x - m) / y;
    div = MODULO_PICK(adj, div - (scalar_t)1, div);
    scalar_t fl = libm ? floor(div) : (scalar_t)modulo_floor((double)div);
    fl = MODULO_PICK(div - fl > (scalar_t)0.5, fl + (scalar_t)1, fl);
    const scalar_t q = x / y;
    const scalar_t r = MODULO_PICK(div == 0, copysign((scalar_t)0, q), fl);
    return MODULO_PICK(y == 0, q, r);
}

/* The op's result from m = fmod(x, y); `libm`: a slow lane's (C's floor, any |x / y|). */
static inline scalar_t FN(modulo_finish)(int op, scalar_t m, scalar_t x, scalar_t y, int libm) {
    if (op == MODULO_REMAINDER) return FN(modulo_remainder)(m, x, y);
    if (op == MODULO_FLOOR_DIVIDE) return FN(modulo_floor_divide)(m, x, y, libm);
    return m;
}

/* One op over [lo, hi) for one layout: x(i), y(i) read the operands. */
#define MODULO_LOOP(OP, XI, YI)                                                            \
    for (int64_t i = lo; i < hi; i++) {                                                    \
        const scalar_t x = XI, y = YI;                                                     \
        out[i] = FN(modulo_finish)(OP, FN(modulo_fast)(x, y), x, y, 0);                       \
        slow |= FN(modulo_slow)(x, y);                                                     \
    }

#define MODULO_LAYOUTS(OP)                                                                 \
    if (t->as && t->bs) {                                                                  \
        MODULO_LOOP(OP, a[i], b[i])                                                        \
    } else if (t->as) {                                                                    \
        const scalar_t y0 = b[0];                                                          \
        MODULO_LOOP(OP, a[i], y0)                                                          \
    } else {                                                                               \
        const scalar_t x0 = a[0];                                                          \
        MODULO_LOOP(OP, x0, b[i])                                                          \
    }

static void FN(modulo_task)(void *p, int64_t lo, int64_t hi) {
    const FN(modulo_args) *t = p;
    const scalar_t *restrict a = t->a, *restrict b = t->b;
    scalar_t *restrict out = t->out;
    int slow = 0;
    if (t->op == MODULO_FMOD) {
        MODULO_LAYOUTS(MODULO_FMOD)
    } else if (t->op == MODULO_REMAINDER) {
        MODULO_LAYOUTS(MODULO_REMAINDER)
    } else {
        MODULO_LAYOUTS(MODULO_FLOOR_DIVIDE)
    }
    if (!slow) return;
    for (int64_t i = lo; i < hi; i++) {
        const scalar_t x = a[i * t->as], y = b[i * t->bs];
        if (FN(modulo_slow)(x, y)) out[i] = FN(modulo_finish)(t->op, MODULO_LIBM(x, y), x, y, 1);
    }
}

#undef MODULO_LAYOUTS
#undef MODULO_LOOP

void FN(modulo)(const scalar_t *a, int64_t as, const scalar_t *b, int64_t bs, scalar_t *out,
                int64_t n, int op) {
    FN(modulo_args) t = {a, b, out, as, bs, op};
    ember_parallel_for(FN(modulo_task), &t, n, 16384);
}

/* hypot: float as the C library's hypotf computes it (glibc: in double, sqrt(x x + y y),
 * the squares exact, the square root rounded to float: checked against it on 30 million
 * inputs and every pair of special values), an infinity winning over a NaN; double by the
 * C library's hypot itself (NumPy's twin calls both). */
static inline scalar_t FN(hypot_one)(scalar_t x, scalar_t y) {
    if (MODULO_WIDE) return hypot(x, y);
    const double xd = x, yd = y;
    const int inf = (fabs(xd) == INFINITY) | (fabs(yd) == INFINITY);
    return (scalar_t)ember_pick(inf, INFINITY, sqrt(xd * xd + yd * yd));
}

static void FN(hypot_task)(void *p, int64_t lo, int64_t hi) {
    const FN(modulo_args) *t = p;
    const scalar_t *restrict a = t->a, *restrict b = t->b;
    scalar_t *restrict out = t->out;
    if (t->as && t->bs) {
        for (int64_t i = lo; i < hi; i++) out[i] = FN(hypot_one)(a[i], b[i]);
    } else if (t->as) {
        const scalar_t y = b[0];
        for (int64_t i = lo; i < hi; i++) out[i] = FN(hypot_one)(a[i], y);
    } else {
        const scalar_t x = a[0];
        for (int64_t i = lo; i < hi; i++) out[i] = FN(hypot_one)(x, b[i]);
    }
}

void FN(hypot)(const scalar_t *a, int64_t as, const scalar_t *b, int64_t bs, scalar_t *out,
               int64_t n) {
    FN(modulo_args) t = {a, b, out, as, bs, 0};
    ember_parallel_for(FN(hypot_task), &t, n, 16384);
}

/* nextafter: the neighbour of x toward y by a step of the bit pattern (C's nextafter, which
 * NumPy's twin calls per element, is exact: the same bits): one up in magnitude where y
 * lies away from zero, one down otherwise; from zero the smallest subnormal with y's sign;
 * y itself where x == y (so nextafter(0.0, -0.0) is -0.0); NaN where either is NaN. */
static inline scalar_t FN(nextafter_one)(scalar_t x, scalar_t y) {
    const int away = (y > x) == (x > 0);
    scalar_t r;
    if (MODULO_WIDE) {
        const uint64_t ux = ember_bits_d(x), uy = ember_bits_d(y);
        const uint64_t zero = (uint64_t)0 - (uint64_t)(x == 0);
        const uint64_t step = ux - 1 + 2 * (uint64_t)away;
        r = ember_double_of((step & ~zero) | (((uy & 0x8000000000000000ull) | 1) & zero));
    } else {
        const uint32_t ux = ember_bits_f(x), uy = ember_bits_f(y);
        const uint32_t zero = (uint32_t)0 - (uint32_t)(x == 0);
        const uint32_t step = ux - 1 + 2 * (uint32_t)away;
        r = ember_float_of((step & ~zero) | (((uy & 0x80000000u) | 1) & zero));
    }
    r = MODULO_PICK(x == y, y, r);
    return MODULO_PICK((x != x) | (y != y), x + y, r);
}

static void FN(nextafter_task)(void *p, int64_t lo, int64_t hi) {
    const FN(modulo_args) *t = p;
    const scalar_t *restrict a = t->a, *restrict b = t->b;
    scalar_t *restrict out = t->out;
    if (t->as && t->bs) {
        for (int64_t i = lo; i < hi; i++) out[i] = FN(nextafter_one)(a[i], b[i]);
    } else if (t->as) {
        const scalar_t y = b[0];
        for (int64_t i = lo; i < hi; i++) out[i] = FN(nextafter_one)(a[i], y);
    } else {
        const scalar_t x = a[0];
        for (int64_t i = lo; i < hi; i++) out[i] = FN(nextafter_one)(x, b[i]);
    }
}

void FN(nextafter)(const scalar_t *a, int64_t as, const scalar_t *b, int64_t bs,
                   scalar_t *out, int64_t n) {
    FN(modulo_args) t = {a, b, out, as, bs, 0};
    ember_parallel_for(FN(nextafter_task), &t, n, 16384);
}

#ifndef EMBER_INT_DIVISION_ONCE
#define EMBER_INT_DIVISION_ONCE
/* Integer fmod (C's %, the dividend's sign), remainder (Python's: the divisor's sign),
 * floor division and truncating division of int32 / int64, the ops of MODULO_* above and
 * MODULO_TRUNC_DIVIDE: NumPy's floor_divide and remainder take a pass each (and trunc
 * division four more to undo the floor). x / -1 is -x wrapped (INT_MIN stays INT_MIN, as
 * NumPy gives), never C's overflow. A zero divisor anywhere: nothing is written and 1 is
 * returned (the caller's NumPy kernel then raises, as PyTorch does). Serial: the
 * division instruction is the cost, and NumPy's own loops are serial too. */
enum { MODULO_TRUNC_DIVIDE = 3 };

#define EMBER_INT_DIVISION(T, U, SFX)                                                      \
    int64_t int_division_##SFX(const T *a, int64_t as, const T *b, int64_t bs, T *out,     \
                               int64_t n, int op) {                                        \
        int zero = 0;                                                                      \
        for (int64_t i = 0; i < (bs ? n : 1); i++) zero |= b[i] == 0;                      \
        if (zero) return 1;                                                                \
        for (int64_t i = 0; i < n; i++) {                                                  \
            const T x = a[i * as], y = b[i * bs];                                          \
            const int neg_one = y == -1;                                                   \
            const T q = neg_one ? (T)((U)0 - (U)x) : x / y;                                \
            const T r = neg_one ? 0 : x % y;                                               \
            const int off = (r != 0) & ((r ^ y) < 0); /* r's sign is not y's */           \
            if (op == MODULO_FMOD) out[i] = r;                                             \
            else if (op == MODULO_REMAINDER) /* (no branch: off is a coin toss) */         \
                out[i] = (T)((U)r + ((U)y & ((U)0 - (U)off)));                             \
            else if (op == MODULO_FLOOR_DIVIDE) out[i] = q - (T)off;                       \
            else out[i] = q;                                                               \
        }                                                                                  \
        return 0;                                                                          \
    }

EMBER_INT_DIVISION(int32_t, uint32_t, i32)
EMBER_INT_DIVISION(int64_t, uint64_t, i64)

#undef EMBER_INT_DIVISION
#endif
