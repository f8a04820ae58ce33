/* activation.c: ReLU, the derivative kernels of activations, and GELU's arithmetic passes, one
 * pass each. Written once against scalar_t and FN(name); kernels.py compiles it for float and
 * double.
 *
 * threshold_backward (ReLU's and threshold's derivative): g where x > threshold, else +0.0,
 * so a NaN x keeps g, as PyTorch's `x <= t ? 0 : g` and the NumPy twin's bitwise select;
 * the threshold is rounded to scalar_t first, as NumPy compares an array with a number.
 *
 * GELU (float32 forward and derivative): the NumPy kernels (ops/activation.py `_gelu_body`,
 * `_gelu_grad_body`) make about thirty passes over memory; here the operations before and
 * after exp are one pass each, with exactly their roundings in their order (every Python
 * number rounded to scalar_t first, as NumPy treats a number next to an array; IEEE, no
 * contraction). exp itself stays NumPy's (the caller runs np.exp between the two), so the
 * results are the NumPy kernels' bits. Contiguous arrays; the caller splits the work over
 * threads.
 */
#include <math.h>

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

#define EMBER_FABS_T(x) _Generic((x), float: fabsf, default: fabs)(x)

/* e = x^2 * -0.5: the argument of exp in both kernels. */
void FN(gelu_exp_arg)(const scalar_t *x, scalar_t *e, int64_t n) {
    const scalar_t half = (scalar_t)-0.5;
    for (int64_t i = 0; i < n; i++) e[i] = (x[i] * x[i]) * half;
}

/* out = x Phi(x), given e = exp(-x^2 / 2): Phi(x) = h + (x > 0)(1 - 2h), with
 * h = 0.5 erfc(|x| / sqrt(2)) = e * Q(t), t = 1 / (1 + c |x|), Q by Horner from q[0]. */
#define GELU_NQ 9 /* Q's degree 8: ops/activation.py _GELU_Q */

int FN(gelu_finish)(const scalar_t *x, const scalar_t *e, scalar_t *out, int64_t n,
                    const double *q, int64_t nq, double c) {
    if (nq != GELU_NQ) return -1;
    const scalar_t cs = (scalar_t)c, one = (scalar_t)1, m2 = (scalar_t)-2;
    scalar_t qs[GELU_NQ];
    for (int64_t k = 0; k < GELU_NQ; k++) qs[k] = (scalar_t)q[k];
    for (int64_t i = 0; i < n; i++) {
        const scalar_t xi = x[i];
        scalar_t t = EMBER_FABS_T(xi);
        t = t * cs;
        t = t + one;
        t = one / t;
        scalar_t h = t * qs[0];
        for (int k = 1; k < GELU_NQ; k++) {
            h = h + qs[k];
            h = h * t;
        }
        h = h * e[i];
        t = h * m2;
        t = t + one;
        t = t * (scalar_t)(xi > 0);
        h = h + t;
        out[i] = h * xi;
    }
    return 0;
}

/* res = g (Phi(x) + x phi(x)), Phi(x) = y / x (0.5 at x = 0), given e = exp(-x^2 / 2):
 * x phi(x) = e * x * c (c = 1 / sqrt(2 pi)). */
void FN(gelu_grad_finish)(const scalar_t *g, const scalar_t *x, const scalar_t *y,
                          const scalar_t *e, scalar_t *res, int64_t n, double c) {
    const scalar_t cs = (scalar_t)c, half = (scalar_t)0.5;
    for (int64_t i = 0; i < n; i++) {
        const scalar_t xi = x[i];
        scalar_t r = y[i] / xi;
        if (xi == 0) r = half;
        scalar_t p = e[i] * xi;
        p = p * cs;
        r = r + p;
        res[i] = r * g[i];
    }
}
