/* activation.c: ReLU and the derivative kernels of activations, one pass each. Written once against
 * scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * threshold_backward (ReLU's and threshold's derivative): g where x > threshold, else +0.0,
 * so a NaN x keeps g, as PyTorch's `x <= t ? 0 : g` and the NumPy twin's bitwise select;
 * the threshold is rounded to scalar_t first, as NumPy compares an array with a number.
 */
#include "ember.h"

typedef struct {
    const scalar_t *g, *x;
    scalar_t *out;
    scalar_t threshold;
} FN(threshold_backward_args);

static void FN(threshold_backward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(threshold_backward_args) *a = p;
    const scalar_t *restrict g = a->g, *restrict x = a->x;
    scalar_t *restrict out = a->out;
    const scalar_t t = a->threshold;
    for (int64_t i = lo; i < hi; i++) out[i] = x[i] <= t ? (scalar_t)0 : g[i];
}

void FN(threshold_backward)(const scalar_t *g, const scalar_t *x, scalar_t *out, int64_t n,
                            double threshold) {
    FN(threshold_backward_args) a = {g, x, out, (scalar_t)threshold};
    ember_parallel_for(FN(threshold_backward_task), &a, n, 1 << 15);
}

/* relu: x < 0 ? +0.0 : x, so NaN and -0.0 pass through (np.maximum(0, x), the NumPy twin's
 * bound first, returns x on a tie and NaN for NaN). */
typedef struct {
    const scalar_t *x;
    scalar_t *out;
} FN(relu_args);

static void FN(relu_task)(void *p, int64_t lo, int64_t hi) {
    const FN(relu_args) *a = p;
    const scalar_t *restrict x = a->x;
    scalar_t *restrict out = a->out;
    for (int64_t i = lo; i < hi; i++) out[i] = x[i] < 0 ? (scalar_t)0 : x[i];
}

void FN(relu)(const scalar_t *x, scalar_t *out, int64_t n) {
    FN(relu_args) a = {x, out};
    ember_parallel_for(FN(relu_task), &a, n, 1 << 15);
}
