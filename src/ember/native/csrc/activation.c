/* activation.c: ReLU, the derivative kernels of activations, and GELU (gelu.h), one pass
 * each. Written once against scalar_t and FN(name); kernels.py compiles it for float and
 * double.
 *
 * threshold_backward (ReLU's and threshold's derivative): g where x > threshold, else +0.0,
 * so a NaN x keeps g, as PyTorch's `x <= t ? 0 : g` and the NumPy twin's bitwise select;
 * the threshold is rounded to scalar_t first, as NumPy compares an array with a number.
 *
 * GELU (float32 forward and derivative): the NumPy kernels (ops/gelu.py `_gelu_body`,
 * `_gelu_grad_body`) make about thirty passes over memory; here one, with exactly their
 * roundings in their order (every Python number rounded to float first, as NumPy treats a
 * number next to an array; IEEE, no contraction) and ember_math.h's exp for NumPy's, so
 * within 2 ulps of the NumPy kernels, and bit for bit what a compiled program's fused loop
 * computes (both call gelu.h). Contiguous arrays; the caller splits the work over threads.
 */
#include <math.h>

#include "ember.h"
#include "gelu.h"

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

/* GELU and its derivative (float32 only; gelu.h, shared with compiled programs' fused
 * loops). `q`: Q's coefficients in double (rounded to float here, as NumPy rounds them);
 * returns -1 for a Q of another degree. */
int FN(gelu_forward)(const float *x, float *out, int64_t n, const double *q, int64_t nq,
                     double c) {
    if (nq != EMBER_GELU_NQ) return -1;
    float qs[EMBER_GELU_NQ];
    for (int k = 0; k < EMBER_GELU_NQ; k++) qs[k] = (float)q[k];
    const float cs = (float)c;
    for (int64_t i = 0; i < n; i++) out[i] = ember_gelu_f(x[i], qs, cs);
    return 0;
}

void FN(gelu_backward)(const float *g, const float *x, const float *y, float *res, int64_t n,
                       double c2) {
    const float cs = (float)c2;
    for (int64_t i = 0; i < n; i++) res[i] = ember_gelu_grad_f(g[i], x[i], y[i], cs);
}
