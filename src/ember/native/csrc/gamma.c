/* gamma.c: digamma and lgamma over contiguous arrays, the C twins of the NumPy kernels
 * `_special_float32.digamma32` and `_special_math._lgamma64`, step for step. Written once
 * against scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * - digamma: PyTorch's calc_digamma in the input's dtype (recurrence up to 10, Cephes'
 *   series, fused where `fused` as its AVX2 build, reflection below 0 through double tan);
 *   its log is the C library's logf / log, as the NumPy kernel's (`_cephes_bessel.libm`),
 *   so the bits are the NumPy kernel's.
 * - lgamma: ember's float64 series (`_lgamma64`: Taylor series of lgamma(1 + z), recurrence,
 *   Stirling, reflection), rounded once to the input's dtype. Its coefficients come from the
 *   caller (the NumPy kernel's own tables). The NumPy kernel takes NumPy's log, log1p and
 *   sin, which round the last bit differently from the C library's in a few percent of
 *   values: float64 results agree to a few ulps, float32 ones nearly always bit for bit.
 *
 * Elements are independent: they run on the thread pool.
 */
#include <math.h>
#include <stdint.h>

#include "ember.h"

#define LOG_T(x) _Generic((x), float: logf, default: log)(x)

#ifndef EMBER_GAMMA_ONCE
#define EMBER_GAMMA_ONCE

static const double DIGAMMA_A[7] = {
    8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
    -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
    8.33333333333333333333e-2};
#define PSI_10 2.25175258906672110764
#define PI_D 3.14159265358979323846

typedef struct {
    const void *x;
    void *out;
    int fused;
    const double *taylor; /* lgamma(1 + z): its coefficients, highest power first */
    int64_t n_taylor;
    const double *stirling; /* B_2k / (2k (2k - 1)), k = 8 down to 1 */
    double half_log2pi;
} gamma_ctx;

/* The argument z of lgamma(1 + z) that `_lgamma_pos` takes for x > 0 (0 where none). */
static inline double lgamma_z(double x) {
    if (x < 0.5) return x;
    if (x < 1.5) return x - 1.0;
    if (x < 10.0) return (x - floor(x - 1.5)) - 2.0;
    return 0.0;
}

/* lgamma for x > 0 (`_lgamma_pos`), given h = lgamma(1 + lgamma_z(x)). */
static double lgamma_pos(const gamma_ctx *c, double x, double h) {
    if (x < 0.5) return h - log(x);
    if (x < 1.5) return h;
    if (x < 10.0) {
        const double n = floor(x - 1.5);
        const double y = x - n;
        double prod = 1.0;
        for (int k = 1; k <= 8; k++)
            if (n >= k) prod = prod * (x - k);
        return (h + log1p(y - 2.0)) + log(prod);
    }
    const double inv = 1.0 / x, inv2 = 1.0 / (x * x);
    double acc = 0.0;
    for (int k = 0; k < 8; k++) acc = acc * inv2 + c->stirling[k];
    return (((x - 0.5) * log(x) - x) + c->half_log2pi) + acc * inv;
}

/* `_lgamma64` of x, given h = lgamma(1 + z) for its positive argument (x, or 1 - x below
 * 0): poles (0 and the negative integers) and -inf give inf. */
static double lgamma_d(const gamma_ctx *c, double x, double h) {
    double out = INFINITY;
    if (isnan(x)) {
        out = NAN;
    } else if (isinf(x)) {
        out = INFINITY;
    } else if (x > 0) {
        out = lgamma_pos(c, x, h);
    } else if (x < 0 && x != floor(x)) {
        const double s = fabs(sin(PI_D * (x - nearbyint(x))));
        out = log(PI_D / s) - lgamma_pos(c, 1.0 - x, h);
    }
    return out + 0.0;
}

#define LGAMMA_LANES 64

#endif

/* calc_digamma for x > 0 (and +inf, NaN): `_special_float32._digamma_nonneg`. */
static scalar_t FN(digamma_nonneg)(scalar_t x, int fused) {
    scalar_t result = 0;
    for (int k = 0; k < 12 && x < 10; k++) {
        result = result - (scalar_t)1 / x;
        x = x + 1;
    }
    if (x == 10) return result + (scalar_t)PSI_10;
    const scalar_t z = (scalar_t)1 / (x * x);
    scalar_t poly = 0;
    for (int k = 0; k < 7; k++)
        poly = fused ? EMBER_FMA_T(poly, z, (scalar_t)DIGAMMA_A[k])
                     : poly * z + (scalar_t)DIGAMMA_A[k];
    const scalar_t y = x < (scalar_t)1e17 ? z * poly : (scalar_t)0;
    return ((result + LOG_T(x)) - (scalar_t)0.5 / x) - y;
}

static void FN(digamma_task)(void *p, int64_t lo, int64_t hi) {
    const gamma_ctx *c = p;
    const scalar_t *x = c->x;
    scalar_t *out = c->out;
    for (int64_t i = lo; i < hi; i++) {
        const scalar_t v = x[i];
        if (v == 0) {
            out[i] = signbit(v) ? (scalar_t)INFINITY : -(scalar_t)INFINITY; /* a pole */
            continue;
        }
        if (!(v < 0)) {
            out[i] = FN(digamma_nonneg)(v, c->fused);
            continue;
        }
        scalar_t r = FN(digamma_nonneg)((scalar_t)1 - v, c->fused);
        const double xn = (double)v;
        const double frac = xn - trunc(xn);
        r = r - (scalar_t)(PI_D / tan(PI_D * frac));
        out[i] = v == trunc(v) ? (scalar_t)NAN : r;
    }
}

/* digamma of n values (PyTorch's calc_digamma; `fused`: its AVX2 build's FMAs). */
void FN(ember_digamma)(const scalar_t *x, scalar_t *out, int64_t n, int fused) {
    gamma_ctx c = {x, out, fused, NULL, 0, NULL, 0.0};
    ember_parallel_for(FN(digamma_task), &c, n, 4096);
}

/* Lanes of LGAMMA_LANES values at a time: the Taylor series (lgamma(1 + z), Horner as
 * `_lgamma1p`, most of the work) runs across the lanes, where it vectorises. */
static void FN(lgamma_task)(void *p, int64_t lo, int64_t hi) {
    const gamma_ctx *c = p;
    const scalar_t *x = c->x;
    scalar_t *out = c->out;
    double z[LGAMMA_LANES], h[LGAMMA_LANES];
    for (int64_t i = lo; i < hi; i += LGAMMA_LANES) {
        const int m = (int)EMBER_MIN(LGAMMA_LANES, hi - i);
        for (int j = 0; j < m; j++) {
            const double v = (double)x[i + j];
            const double zj = lgamma_z(v > 0 ? v : 1.0 - v);
            z[j] = isfinite(zj) ? zj : 0.0;
            h[j] = 0.0;
        }
        for (int j = m; j < LGAMMA_LANES; j++) z[j] = h[j] = 0.0;
        for (int64_t k = 0; k < c->n_taylor; k++) {
            const double ck = c->taylor[k];
            for (int j = 0; j < LGAMMA_LANES; j++) h[j] = (h[j] + ck) * z[j];
        }
        for (int j = 0; j < m; j++) out[i + j] = (scalar_t)lgamma_d(c, (double)x[i + j], h[j]);
    }
}

/* lgamma of n values in double, rounded once (`_lgamma64`, its tables handed in). */
void FN(ember_lgamma)(const scalar_t *x, scalar_t *out, int64_t n, const double *taylor,
                      int64_t n_taylor, const double *stirling, double half_log2pi) {
    gamma_ctx c = {x, out, 0, taylor, n_taylor, stirling, half_log2pi};
    ember_parallel_for(FN(lgamma_task), &c, n, 4096);
}
