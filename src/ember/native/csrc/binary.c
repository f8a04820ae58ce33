/* binary.c: out = a + b over two contiguous arrays of one shape and dtype, split over the
 * kernel threads in chunks of at least 32768 elements. Written once against scalar_t and
 * FN(name); kernels.py compiles it for float and double.
 *
 * The NumPy twin is np.add: each sum is one IEEE addition, so the results are the same
 * bits (NaN stays NaN, -0.0 + -0.0 is -0.0, -0.0 + 0.0 is +0.0). What this adds is the
 * threads: a training step's large sums (a residual connection, two gradients of one
 * tensor meeting in backward) otherwise run on one core.
 */
#include "ember.h"

typedef struct {
    const scalar_t *a, *b;
    scalar_t *out;
} FN(add_args);

static void FN(add_task)(void *p, int64_t lo, int64_t hi) {
    const FN(add_args) *t = p;
    const scalar_t *restrict a = t->a, *restrict b = t->b;
    scalar_t *restrict out = t->out;
    for (int64_t i = lo; i < hi; i++) out[i] = a[i] + b[i];
}

void FN(add)(const scalar_t *a, const scalar_t *b, scalar_t *out, int64_t n) {
    FN(add_args) t = {a, b, out};
    ember_parallel_for(FN(add_task), &t, n, 1 << 15);
}
