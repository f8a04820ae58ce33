/* binary.c: out = a op b (op: + - * /) over two contiguous arrays of one shape and dtype,
 * split over the kernel threads in chunks of at least 32768 elements. Written once against
 * scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * The NumPy twins are np.add, np.subtract, np.multiply and np.true_divide: each result is
 * one IEEE operation, so the results are the same bits (NaN stays NaN, signed zeros and
 * infinities as IEEE says). What this adds is the threads: a training step's large
 * pointwise products and sums (a residual connection, two gradients of one tensor meeting
 * in backward, a mask applied) otherwise run on one core.
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
