/* multiply_add.c: the ops PyTorch's CPU kernels compute as fused multiply-adds, each one
 * rounding (C's fma; -ffp-contract=off leaves no other contraction):
 *
 *   scaled_add   out = fma(b, k, a)                        add(a, b, alpha=k)
 *   addcmul      out = fma(k * b, c, a)                    addcmul(a, b, c, value=k)
 *   lerp         d = b - a; |w| < 0.5 ? fma(w, d, a) : fma(-d, 1 - w, b)
 *                (w one number, or an array: lerp with a tensor weight)
 *
 * and beside them addcdiv, out = a + (k * b) / c, which PyTorch (and the NumPy twin,
 * ops/ternary._addc_kernel) rounds op by op, no fma: one pass where NumPy makes three.
 *
 * Contiguous arrays of one shape and dtype; `out` may be any of them (an in-place op: each
 * element is read before it is written, so no pointer is `restrict`). Split over the kernel threads from 32K elements. The NumPy
 * twins are ops/_fma.py's emulation, the same bits.
 */
#include <math.h>

#include "ember.h"

#define FABS_T(x) _Generic((x), float: fabsf, default: fabs)(x)

typedef struct {
    const scalar_t *a, *b, *c;
    scalar_t *out;
    scalar_t k;
} FN(madd_args);

static void FN(scaled_add_task)(void *p, int64_t lo, int64_t hi) {
    const FN(madd_args) *t = p;
    const scalar_t *a = t->a, *b = t->b, k = t->k;
    scalar_t *out = t->out;
    for (int64_t i = lo; i < hi; i++) out[i] = EMBER_FMA_T(b[i], k, a[i]);
}

static void FN(addcmul_task)(void *p, int64_t lo, int64_t hi) {
    const FN(madd_args) *t = p;
    const scalar_t *a = t->a, *b = t->b, *c = t->c, k = t->k;
    scalar_t *out = t->out;
    for (int64_t i = lo; i < hi; i++) out[i] = EMBER_FMA_T(k * b[i], c[i], a[i]);
}

static void FN(lerp_task)(void *p, int64_t lo, int64_t hi) {
    const FN(madd_args) *t = p;
    const scalar_t *a = t->a, *b = t->b, *w = t->c, k = t->k;
    scalar_t *out = t->out;
    if (w == NULL) {
        const scalar_t rest = (scalar_t)1 - k;
        if (FABS_T(k) < (scalar_t)0.5)
            for (int64_t i = lo; i < hi; i++) out[i] = EMBER_FMA_T(k, b[i] - a[i], a[i]);
        else
            for (int64_t i = lo; i < hi; i++) out[i] = EMBER_FMA_T(-(b[i] - a[i]), rest, b[i]);
        return;
    }
    for (int64_t i = lo; i < hi; i++) {
        const scalar_t d = b[i] - a[i], wi = w[i];
        const scalar_t from_a = EMBER_FMA_T(wi, d, a[i]);
        const scalar_t from_b = EMBER_FMA_T(-d, (scalar_t)1 - wi, b[i]);
        out[i] = FABS_T(wi) < (scalar_t)0.5 ? from_a : from_b;
    }
}

static void FN(addcdiv_task)(void *p, int64_t lo, int64_t hi) {
    const FN(madd_args) *t = p;
    const scalar_t *a = t->a, *b = t->b, *c = t->c, k = t->k;
    scalar_t *out = t->out;
    for (int64_t i = lo; i < hi; i++) out[i] = a[i] + (k * b[i]) / c[i];
}

#define EMBER_MADD(name)                                                                   \
    void FN(name)(const scalar_t *a, const scalar_t *b, const scalar_t *c, scalar_t *out,   \
                  int64_t n, double k) {                                                    \
        FN(madd_args) t = {a, b, c, out, (scalar_t)k};                                     \
        ember_parallel_for(FN(name##_task), &t, n, 1 << 15);                               \
    }

/* (k: the number, rounded to scalar_t here as PyTorch casts it; c: NULL where unused) */
EMBER_MADD(scaled_add)
EMBER_MADD(addcmul)
EMBER_MADD(addcdiv)
EMBER_MADD(lerp)

#undef EMBER_MADD

/* fma3: out = fma(x, y, z) elementwise, each operand either the result's size (C-order) or
 * one value broadcast over it (`*_full` = 0): ops/_fma.py's `fma` where native kernels are
 * on (linspace's and arange's points, batch and layer norm's NumPy steps, the special
 * functions' polynomials), which NumPy emulates in a dozen passes. One loop per pattern,
 * so that each one vectorises. */
typedef struct {
    const scalar_t *x, *y, *z;
    scalar_t *out;
    int pattern; /* x_full << 2 | y_full << 1 | z_full */
} FN(fma3_args);

#define FMA3_LOOP(X, Y, Z) \
    for (int64_t i = lo; i < hi; i++) out[i] = EMBER_FMA_T(X, Y, Z)

static void FN(fma3_task)(void *p, int64_t lo, int64_t hi) {
    const FN(fma3_args) *t = p;
    const scalar_t *restrict x = t->x, *restrict y = t->y, *restrict z = t->z;
    scalar_t *restrict out = t->out;
    const scalar_t x0 = x[0], y0 = y[0], z0 = z[0];
    switch (t->pattern) {
    case 7: FMA3_LOOP(x[i], y[i], z[i]); break;
    case 6: FMA3_LOOP(x[i], y[i], z0); break;
    case 5: FMA3_LOOP(x[i], y0, z[i]); break;
    case 4: FMA3_LOOP(x[i], y0, z0); break;
    case 3: FMA3_LOOP(x0, y[i], z[i]); break;
    case 2: FMA3_LOOP(x0, y[i], z0); break;
    case 1: FMA3_LOOP(x0, y0, z[i]); break;
    default: FMA3_LOOP(x0, y0, z0); break;
    }
}

#undef FMA3_LOOP

void FN(fma3)(const scalar_t *x, const scalar_t *y, const scalar_t *z, scalar_t *out,
              int64_t n, int pattern) {
    FN(fma3_args) t = {x, y, z, out, pattern};
    ember_parallel_for(FN(fma3_task), &t, n, 1 << 15);
}
