/* batch_norm.c: training-mode batch normalisation, forward and backward, one channel per
 * task. Written once against scalar_t and FN(name); kernels.py compiles it for float and
 * double.
 *
 * x is contiguous (n, c, len). Per channel the statistics are sums in double (as PyTorch's
 * CPU kernel accumulates; reduce.h's lanes, restarting at each plane), two passes (mean,
 * then the centred squares), and one pass writes
 * out = (x - mean) * scale + bias and xhat = (x - mean) * rstd, rounded as ember's NumPy
 * kernel rounds them: mean, var, rstd = 1 / sqrt(var + eps) and scale = rstd * weight are
 * scalar_t values, each product and sum rounded once.
 */
#include <math.h>

#include "ember.h"
#include "reduce.h"

typedef struct {
    const scalar_t *x, *weight, *bias;
    scalar_t *out, *xhat, *mean, *var, *rstd;
    int64_t n, c, len;
    double eps;
} FN(bn_forward_args);

static void FN(bn_forward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(bn_forward_args) *a = p;
    const int64_t n = a->n, c = a->c, len = a->len;
    const double count = (double)(n * len);
    for (int64_t ch = lo; ch < hi; ch++) {
        double acc[EMBER_LANES] = {0};
        for (int64_t i = 0; i < n; i++) FN(acc_sum)(acc, a->x + (i * c + ch) * len, len);
        const scalar_t mean = (scalar_t)(ember_lanes_total(acc) / count);
        double sq[EMBER_LANES] = {0};
        for (int64_t i = 0; i < n; i++)
            FN(acc_sq_dev)(sq, a->x + (i * c + ch) * len, len, (double)mean);
        const scalar_t var = (scalar_t)(ember_lanes_total(sq) / count);
        const scalar_t rstd = (scalar_t)1 / (scalar_t)sqrt((double)(var + (scalar_t)a->eps));
        const scalar_t scale = a->weight ? rstd * a->weight[ch] : rstd;
        const scalar_t shift = a->bias ? a->bias[ch] : (scalar_t)0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t at = (i * c + ch) * len;
            const scalar_t *xs = a->x + at;
            scalar_t *o = a->out + at, *h = a->xhat + at;
            if (a->bias) {
                for (int64_t j = 0; j < len; j++) {
                    const scalar_t d = xs[j] - mean;
                    o[j] = d * scale + shift;
                    h[j] = d * rstd;
                }
            } else {
                for (int64_t j = 0; j < len; j++) {
                    const scalar_t d = xs[j] - mean;
                    o[j] = d * scale;
                    h[j] = d * rstd;
                }
            }
        }
        a->mean[ch] = mean;
        a->var[ch] = var;
        a->rstd[ch] = rstd;
    }
}

void FN(bn_forward)(const scalar_t *x, const scalar_t *weight, const scalar_t *bias,
                    scalar_t *out, scalar_t *xhat, scalar_t *mean, scalar_t *var,
                    scalar_t *rstd, int64_t n, int64_t c, int64_t len, double eps) {
    FN(bn_forward_args) a = {x, weight, bias, out, xhat, mean, var, rstd, n, c, len, eps};
    ember_parallel_for(FN(bn_forward_task), &a, c, n * len >= 4096 ? 1 : c);
}

/* dx = ((g - xhat * (dweight / count)) * scale) - (dbias / count) * scale,
 * dweight = sum(g xhat), dbias = sum(g), scale = rstd * weight: the NumPy kernel's order. */
typedef struct {
    const scalar_t *g, *xhat, *rstd, *weight;
    scalar_t *dx, *dweight, *dbias;
    int64_t n, c, len;
} FN(bn_backward_args);

static void FN(bn_backward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(bn_backward_args) *a = p;
    const int64_t n = a->n, c = a->c, len = a->len;
    const scalar_t count = (scalar_t)(n * len);
    for (int64_t ch = lo; ch < hi; ch++) {
        double sg[EMBER_LANES] = {0}, sgx[EMBER_LANES] = {0};
        for (int64_t i = 0; i < n; i++) {
            const int64_t at = (i * c + ch) * len;
            FN(acc_sum_dot)(sg, sgx, a->g + at, a->xhat + at, len);
        }
        const scalar_t dbias = (scalar_t)ember_lanes_total(sg);
        const scalar_t dweight = (scalar_t)ember_lanes_total(sgx);
        const scalar_t scale = a->weight ? a->rstd[ch] * a->weight[ch] : a->rstd[ch];
        const scalar_t k = dweight / count, b = dbias / count * scale;
        if (a->dx) {
            for (int64_t i = 0; i < n; i++) {
                const int64_t at = (i * c + ch) * len;
                const scalar_t *gs = a->g + at, *hs = a->xhat + at;
                scalar_t *d = a->dx + at;
                for (int64_t j = 0; j < len; j++) d[j] = (gs[j] - hs[j] * k) * scale - b;
            }
        }
        a->dweight[ch] = dweight;
        a->dbias[ch] = dbias;
    }
}

void FN(bn_backward)(const scalar_t *g, const scalar_t *xhat, const scalar_t *rstd,
                     const scalar_t *weight, scalar_t *dx, scalar_t *dweight, scalar_t *dbias,
                     int64_t n, int64_t c, int64_t len) {
    FN(bn_backward_args) a = {g, xhat, rstd, weight, dx, dweight, dbias, n, c, len};
    ember_parallel_for(FN(bn_backward_task), &a, c, n * len >= 4096 ? 1 : c);
}
