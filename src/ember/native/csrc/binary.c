/* binary.c: out = a op b (op: + - * /) over two contiguous arrays of one shape and dtype,
 * split over the kernel threads in chunks of at least 32768 elements. Written once against
 * scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * The NumPy twins are np.add, np.subtract, np.multiply and np.true_divide: each result is
 * one IEEE operation, so the results are the same bits (NaN stays NaN, signed zeros and
 * infinities as IEEE says). What this adds is the threads: a training step's large
 * pointwise products and sums (a residual connection, two gradients of one tensor meeting
 * in backward, a mask applied) otherwise run on one core. The broadcast forms below also
 * spare NumPy's per-row inner loops (a (256, 512) array times a row: 3x torch's time).
 */
#include "ember.h"

typedef struct {
    const scalar_t *a, *b;
    scalar_t *out;
} FN(binary_args);

#define EMBER_BINARY(name, op)                                                             \
    static void FN(name##_task)(void *p, int64_t lo, int64_t hi) {                         \
        const FN(binary_args) *t = p;                                                      \
        const scalar_t *restrict a = t->a, *restrict b = t->b;                             \
        scalar_t *restrict out = t->out;                                                   \
        for (int64_t i = lo; i < hi; i++) out[i] = a[i] op b[i];                           \
    }                                                                                      \
    void FN(name)(const scalar_t *a, const scalar_t *b, scalar_t *out, int64_t n) {        \
        FN(binary_args) t = {a, b, out};                                                   \
        ember_parallel_for(FN(name##_task), &t, n, 1 << 15);                               \
    }

EMBER_BINARY(add, +)
EMBER_BINARY(sub, -)
EMBER_BINARY(mul, *)
EMBER_BINARY(div, /)

#undef EMBER_BINARY

/* The broadcast forms (name3): out, C-order, seen as (p, q, r) rows of r; each operand
 * C-order too, read at i * s[0] + j * s[1] + k * s[2] for out[i, j, k], its strides 0 over
 * the dims it is broadcast along (so s[2] is 0 or 1): a row added to every row, a column
 * of per-row values, a (1, C, 1) bias over (N, C, HW). One loop per inner pattern. */
typedef struct {
    const scalar_t *a, *b;
    scalar_t *out;
    int64_t q, r, as[3], bs[3];
} FN(binary3_args);

/* (the work is split by elements, not rows: one long broadcast row, x * a 0-d tensor, is
 * shared out too) */
#define EMBER_BINARY3(name, op)                                                            \
    static void FN(name##3_task)(void *p, int64_t lo, int64_t hi) {                        \
        const FN(binary3_args) *t = p;                                                     \
        const int64_t q = t->q, r = t->r;                                                  \
        for (int64_t row = lo / r; row * r < hi; row++) {                                  \
            const int64_t i = row / q, j = row % q;                                        \
            const int64_t k0 = EMBER_MAX(lo - row * r, 0), k1 = EMBER_MIN(hi - row * r, r); \
            const scalar_t *restrict a = t->a + i * t->as[0] + j * t->as[1];               \
            const scalar_t *restrict b = t->b + i * t->bs[0] + j * t->bs[1];               \
            scalar_t *restrict out = t->out + row * r;                                     \
            if (t->as[2] && t->bs[2]) {                                                    \
                for (int64_t k = k0; k < k1; k++) out[k] = a[k] op b[k];                   \
            } else if (t->as[2]) {                                                         \
                const scalar_t y = b[0];                                                   \
                for (int64_t k = k0; k < k1; k++) out[k] = a[k] op y;                      \
            } else if (t->bs[2]) {                                                         \
                const scalar_t x = a[0];                                                   \
                for (int64_t k = k0; k < k1; k++) out[k] = x op b[k];                      \
            } else {                                                                       \
                const scalar_t v = a[0] op b[0];                                           \
                for (int64_t k = k0; k < k1; k++) out[k] = v;                              \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    void FN(name##3)(const scalar_t *a, const int64_t *as, const scalar_t *b,              \
                     const int64_t *bs, scalar_t *out, int64_t p, int64_t q, int64_t r) {  \
        FN(binary3_args) t = {a, b, out, q, r, {as[0], as[1], as[2]},                      \
                              {bs[0], bs[1], bs[2]}};                                      \
        ember_parallel_for(FN(name##3_task), &t, p * q * r, 1 << 15);                      \
    }

EMBER_BINARY3(add, +)
EMBER_BINARY3(sub, -)
EMBER_BINARY3(mul, *)
EMBER_BINARY3(div, /)

#undef EMBER_BINARY3
