/* activation.c: ReLU, the piecewise activations (leaky_relu, threshold, hardtanh,
 * hardsigmoid, hardswish), the derivative kernels of activations, and GELU (gelu.h), one
 * pass each. Written once against scalar_t and FN(name); kernels.py compiles it for float
 * and double.
 *
 * The piecewise activations are their NumPy twins' operations in the same order (compares,
 * selects, IEEE products and quotients with every Python number rounded to scalar_t first,
 * as NumPy rounds a number next to an array), so the same bits; the NumPy kernels select
 * with masks over whole arrays, a pass or three each, here one.
 *
 * sigmoid and SiLU, and sigmoid_backward, tanh_backward and silu_backward: PyTorch's kernels'
 * arithmetic, one pass each.
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
 * computes (both call gelu.h). Contiguous arrays, split over the kernel threads here.
 */
#include <math.h>

#include "ember.h"
#include "gelu.h"
#include "silu.h"

/* The derivative kernels take the incoming gradient g either whole (gs = 1) or as one value
 * broadcast over every element (gs = 0: the gradient of a sum or a mean). A broadcast g is
 * read from a block of copies, so that one loop body, vectorised, serves both. */
#define EMBER_G_BLOCK 256

/* Calls body(gg, i0, m) over [lo, hi) in blocks of m elements starting at i0, gg[0..m) the
 * block's gradients. */
#define EMBER_OVER_G(g, gs, lo, hi, body)                                                  \
    do {                                                                                   \
        scalar_t copies_[EMBER_G_BLOCK];                                                   \
        if (!(gs))                                                                         \
            for (int k_ = 0; k_ < EMBER_G_BLOCK; k_++) copies_[k_] = (g)[0];               \
        for (int64_t i0 = (lo); i0 < (hi); i0 += EMBER_G_BLOCK) {                          \
            const int64_t m = EMBER_MIN((int64_t)EMBER_G_BLOCK, (hi) - i0);                \
            const scalar_t *restrict gg = (gs) ? (g) + i0 : copies_;                        \
            body;                                                                          \
        }                                                                                  \
    } while (0)

typedef struct {
    const scalar_t *g, *x;
    scalar_t *out;
    scalar_t threshold;
    int64_t gs;
} FN(threshold_backward_args);

static void FN(threshold_backward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(threshold_backward_args) *a = p;
    const scalar_t *restrict x = a->x;
    scalar_t *restrict out = a->out;
    const scalar_t t = a->threshold;
    EMBER_OVER_G(a->g, a->gs, lo, hi, {
        for (int64_t i = 0; i < m; i++) out[i0 + i] = x[i0 + i] <= t ? (scalar_t)0 : gg[i];
    });
}

void FN(threshold_backward)(const scalar_t *g, int64_t gs, const scalar_t *x, scalar_t *out,
                            int64_t n, double threshold) {
    FN(threshold_backward_args) a = {g, x, out, (scalar_t)threshold, gs};
    ember_parallel_for(FN(threshold_backward_task), &a, n, 1 << 15);
}

/* sigmoid and SiLU as PyTorch's float kernels and the NumPy twins write them, 1 / (1 + e^-x)
 * and x / (1 + e^-x), with ember_math.h's exp for NumPy's (so within an ulp or two of
 * theirs); where e^-x overflows sigmoid is +0 and SiLU -0, as theirs. */
enum { EMBER_SIGMOID, EMBER_SILU };

typedef struct {
    const scalar_t *x;
    scalar_t *out;
    int kind;
} FN(smooth_args);

static void FN(smooth_task)(void *p, int64_t lo, int64_t hi) {
    const FN(smooth_args) *a = p;
    const scalar_t *restrict x = a->x;
    scalar_t *restrict out = a->out;
    const scalar_t one = 1;
    if (a->kind == EMBER_SIGMOID) {
        for (int64_t i = lo; i < hi; i++) out[i] = one / (one + ember_exp_t(-x[i]));
    } else {
        for (int64_t i = lo; i < hi; i++) out[i] = x[i] / (one + ember_exp_t(-x[i]));
    }
}

/* Returns -1 for an unknown kind (nothing written). */
int FN(smooth)(const scalar_t *x, scalar_t *out, int64_t n, int kind) {
    if (kind != EMBER_SIGMOID && kind != EMBER_SILU) return -1;
    FN(smooth_args) a = {x, out, kind};
    ember_parallel_for(FN(smooth_task), &a, n, 1 << 15);
    return 0;
}

/* The derivatives of sigmoid, tanh and SiLU, in PyTorch's kernels' order (the NumPy twins
 * in ops/activation_backward.py make the same roundings in the same order; SiLU's exp is
 * ember_math.h's where theirs is NumPy's):
 *   SIGMOID: (g * (1 - y)) * y                y = sigmoid(x)
 *   TANH:    g * fma(-y, y, 1)                y = tanh(x) (PyTorch's compiler contracts it)
 *   SILU:    (g * s) * (1 + x * (1 - s))      s = 1 / (1 + exp(-x)), y = x (silu.h) */
enum { EMBER_SIGMOID_BACKWARD, EMBER_TANH_BACKWARD, EMBER_SILU_BACKWARD };
#define EMBER_FMA_T(a, b, c) _Generic((a), float: fmaf, default: fma)(a, b, c)

typedef struct {
    const scalar_t *g, *y;
    scalar_t *out;
    int kind;
    int64_t gs;
} FN(smooth_backward_args);

static void FN(smooth_backward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(smooth_backward_args) *a = p;
    const scalar_t *restrict y = a->y;
    scalar_t *restrict out = a->out;
    const scalar_t one = 1;
    switch (a->kind) {
    case EMBER_SIGMOID_BACKWARD:
        EMBER_OVER_G(a->g, a->gs, lo, hi, {
            for (int64_t i = 0; i < m; i++)
                out[i0 + i] = (gg[i] * (one - y[i0 + i])) * y[i0 + i];
        });
        break;
    case EMBER_TANH_BACKWARD: /* (1 - y^2 rounded once, as PyTorch's compiled kernel) */
        EMBER_OVER_G(a->g, a->gs, lo, hi, {
            for (int64_t i = 0; i < m; i++)
                out[i0 + i] = gg[i] * EMBER_FMA_T(-y[i0 + i], y[i0 + i], one);
        });
        break;
    case EMBER_SILU_BACKWARD:
        EMBER_OVER_G(a->g, a->gs, lo, hi, {
            for (int64_t i = 0; i < m; i++) out[i0 + i] = ember_silu_grad_t(gg[i], y[i0 + i]);
        });
        break;
    }
}

/* Returns -1 for an unknown kind (nothing written). */
int FN(smooth_backward)(const scalar_t *g, int64_t gs, const scalar_t *y, scalar_t *out,
                        int64_t n, int kind) {
    if (kind < EMBER_SIGMOID_BACKWARD || kind > EMBER_SILU_BACKWARD) return -1;
    FN(smooth_backward_args) a = {g, y, out, kind, gs};
    ember_parallel_for(FN(smooth_backward_task), &a, n, 1 << 15);
    return 0;
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

/* The piecewise activations, one kernel: `kind` picks the formula, p and q its numbers
 * (already rounded to scalar_t by the caller's conversion), each written as its NumPy twin
 * in ops/activation.py computes it:
 *   LEAKY:       x > 0 ? x : x * p                      (np.where(a > 0, a, a * slope))
 *   THRESHOLD:   x <= p ? q : x                         (np.where(a <= t, value, a))
 *   CLAMP:       min(max(x, p), q), NaN and ties keep x (np.minimum(q, np.maximum(p, a)))
 *   HARDSIGMOID: min(max(x + 3, 0), 6) / 6
 *   HARDSWISH:   x * min(max(x + 3, 0), 6) / 6          (the product, then the quotient)
 * A loop per kind, so that each vectorises without a branch on `kind` inside; the choices
 * are ember_math.h's bit-mask picks (a `c ? a : b` lets GCC move hardsigmoid's quotient
 * into both arms: two divisions a vector instead of one). */
enum { EMBER_LEAKY, EMBER_THRESHOLD, EMBER_CLAMP, EMBER_HARDSIGMOID, EMBER_HARDSWISH };

typedef struct {
    const scalar_t *x;
    scalar_t *out;
    scalar_t p, q;
    int kind;
} FN(piecewise_args);

#ifndef EMBER_PICK_T
#define EMBER_PICK_T(c, a, b) _Generic((a), float: ember_pickf, default: ember_pick)(c, a, b)
#endif

static inline scalar_t FN(clamp_one)(scalar_t x, scalar_t lo, scalar_t hi) {
    const scalar_t t = EMBER_PICK_T(x < lo, lo, x); /* (NaN fails both compares: kept) */
    return EMBER_PICK_T(t > hi, hi, t);
}

static void FN(piecewise_task)(void *vp, int64_t lo, int64_t hi) {
    const FN(piecewise_args) *a = vp;
    const scalar_t *restrict x = a->x;
    scalar_t *restrict out = a->out;
    const scalar_t p = a->p, q = a->q;
    const scalar_t three = 3, six = 6, zero = 0;
    switch (a->kind) {
    case EMBER_LEAKY:
        for (int64_t i = lo; i < hi; i++) out[i] = EMBER_PICK_T(x[i] > 0, x[i], x[i] * p);
        break;
    case EMBER_THRESHOLD:
        for (int64_t i = lo; i < hi; i++) out[i] = EMBER_PICK_T(x[i] <= p, q, x[i]);
        break;
    case EMBER_CLAMP:
        for (int64_t i = lo; i < hi; i++) out[i] = FN(clamp_one)(x[i], p, q);
        break;
    case EMBER_HARDSIGMOID:
        for (int64_t i = lo; i < hi; i++) out[i] = FN(clamp_one)(x[i] + three, zero, six) / six;
        break;
    case EMBER_HARDSWISH:
        for (int64_t i = lo; i < hi; i++)
            out[i] = x[i] * FN(clamp_one)(x[i] + three, zero, six) / six;
        break;
    }
}

/* Returns -1 for an unknown kind (nothing written). */
int FN(piecewise)(const scalar_t *x, scalar_t *out, int64_t n, int kind, double p, double q) {
    if (kind < EMBER_LEAKY || kind > EMBER_HARDSWISH) return -1;
    FN(piecewise_args) a = {x, out, (scalar_t)p, (scalar_t)q, kind};
    ember_parallel_for(FN(piecewise_task), &a, n, 1 << 15);
    return 0;
}

/* GELU and its derivative (float32 only; gelu.h, shared with compiled programs' fused
 * loops), split over the kernel threads. `q`: Q's coefficients in double (rounded to float
 * here, as NumPy rounds them); returns -1 for a Q of another degree. */
typedef struct {
    const float *g, *x, *y;
    float *out;
    float q[EMBER_GELU_NQ];
    float c;
} FN(gelu_args);

static void FN(gelu_forward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(gelu_args) *a = p;
    const float *restrict x = a->x;
    float *restrict out = a->out;
    float q[EMBER_GELU_NQ];
    for (int k = 0; k < EMBER_GELU_NQ; k++) q[k] = a->q[k];
    const float c = a->c;
    for (int64_t i = lo; i < hi; i++) out[i] = ember_gelu_f(x[i], q, c);
}

static void FN(gelu_backward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(gelu_args) *a = p;
    const float *restrict g = a->g, *restrict x = a->x, *restrict y = a->y;
    float *restrict out = a->out;
    const float c = a->c;
    for (int64_t i = lo; i < hi; i++) out[i] = ember_gelu_grad_f(g[i], x[i], y[i], c);
}

int FN(gelu_forward)(const float *x, float *out, int64_t n, const double *q, int64_t nq,
                     double c) {
    if (nq != EMBER_GELU_NQ) return -1;
    FN(gelu_args) a = {NULL, x, NULL, out, {0}, (float)c};
    for (int k = 0; k < EMBER_GELU_NQ; k++) a.q[k] = (float)q[k];
    ember_parallel_for(FN(gelu_forward_task), &a, n, 1 << 14);
    return 0;
}

void FN(gelu_backward)(const float *g, const float *x, const float *y, float *res, int64_t n,
                       double c2) {
    FN(gelu_args) a = {g, x, y, res, {0}, (float)c2};
    ember_parallel_for(FN(gelu_backward_task), &a, n, 1 << 14);
}
