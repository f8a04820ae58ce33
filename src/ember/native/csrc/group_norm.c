/* group_norm.c: group normalisation's passes over the data, forward and backward. Written
 * once against scalar_t and FN(name); kernels.py compiles it for float and double. The
 * small per-(sample, channel) coefficients are computed in ops/group_norm.py (shared with
 * the NumPy kernels), so only the full passes are here, rows independent tasks:
 *   gn_stats:  per row of n values, mean = (scalar_t)(sum(x) / n) and
 *              rstd = 1 / sqrt((scalar_t)(sum((x - mean)^2) / n) + eps), sums in double
 *              over reduce.h's 16 lanes (a fixed order, any thread count);
 *   gn_affine: out = x * a[r] + b[r] over each row of hw values (scalar_t, no fma);
 *   gn_sums:   per row of hw values, sum(g) and sum(g x) in double (16 lanes);
 *   gn_dx:     dx = (a[r] g + b[r] x) + c[r] (scalar_t, no fma).
 */
#include "ember.h"
#include "reduce.h"

#include <math.h>

typedef struct {
    const scalar_t *x, *y, *a, *b, *c;
    scalar_t *out, *mean, *rstd;
    double *s1, *s2;
    int64_t n;
    double eps;
} FN(gn_args);

static void FN(gn_stats_task)(void *p, int64_t lo, int64_t hi) {
    const FN(gn_args) *a = p;
    const int64_t n = a->n;
    for (int64_t r = lo; r < hi; r++) {
        FN(row_mean_rstd)(a->x + r * n, n, a->eps, &a->mean[r], &a->rstd[r]);
    }
}

static int64_t FN(gn_grain)(int64_t n) { return EMBER_MAX(1, 16384 / EMBER_MAX(n, 1)); }

void FN(gn_stats)(const scalar_t *x, scalar_t *mean, scalar_t *rstd, int64_t rows, int64_t n,
                  double eps) {
    FN(gn_args) a = {.x = x, .mean = mean, .rstd = rstd, .n = n, .eps = eps};
    ember_parallel_for(FN(gn_stats_task), &a, rows, FN(gn_grain)(n));
}

static void FN(gn_affine_task)(void *p, int64_t lo, int64_t hi) {
    const FN(gn_args) *a = p;
    const int64_t n = a->n;
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t *restrict x = a->x + r * n;
        scalar_t *restrict out = a->out + r * n;
        const scalar_t s = a->a[r], t = a->b[r];
        for (int64_t j = 0; j < n; j++) out[j] = x[j] * s + t;
    }
}

void FN(gn_affine)(const scalar_t *x, const scalar_t *scale, const scalar_t *shift,
                   scalar_t *out, int64_t rows, int64_t n) {
    FN(gn_args) a = {.x = x, .a = scale, .b = shift, .out = out, .n = n};
    ember_parallel_for(FN(gn_affine_task), &a, rows, FN(gn_grain)(n));
}

static void FN(gn_sums_task)(void *p, int64_t lo, int64_t hi) {
    const FN(gn_args) *a = p;
    const int64_t n = a->n;
    for (int64_t r = lo; r < hi; r++) {
        double acc[EMBER_LANES] = {0}, dot[EMBER_LANES] = {0};
        FN(acc_sum_dot)(acc, dot, a->y + r * n, a->x + r * n, n);
        a->s1[r] = ember_lanes_total(acc);
        a->s2[r] = ember_lanes_total(dot);
    }
}

void FN(gn_sums)(const scalar_t *g, const scalar_t *x, double *sg, double *sgx, int64_t rows,
                 int64_t n) {
    FN(gn_args) a = {.x = x, .y = g, .s1 = sg, .s2 = sgx, .n = n};
    ember_parallel_for(FN(gn_sums_task), &a, rows, FN(gn_grain)(n));
}

static void FN(gn_dx_task)(void *p, int64_t lo, int64_t hi) {
    const FN(gn_args) *a = p;
    const int64_t n = a->n;
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t *restrict g = a->y + r * n, *restrict x = a->x + r * n;
        scalar_t *restrict dx = a->out + r * n;
        const scalar_t c1 = a->a[r], c2 = a->b[r], c3 = a->c[r];
        for (int64_t j = 0; j < n; j++) dx[j] = (c1 * g[j] + c2 * x[j]) + c3;
    }
}

void FN(gn_dx)(const scalar_t *g, const scalar_t *x, const scalar_t *c1, const scalar_t *c2,
               const scalar_t *c3, scalar_t *dx, int64_t rows, int64_t n) {
    FN(gn_args) a = {.x = x, .y = g, .a = c1, .b = c2, .c = c3, .out = dx, .n = n};
    ember_parallel_for(FN(gn_dx_task), &a, rows, FN(gn_grain)(n));
}
