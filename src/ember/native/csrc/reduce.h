/* reduce.h: sums in double over EMBER_LANES independent accumulators, for scalar_t data.
 *
 * A plain `s += x[j]` loop is one long dependency chain (and may not be vectorised without
 * -ffast-math, which ember never uses). Sixteen accumulators, element j feeding lane
 * j % 16, vectorise as they are written, so the summation order is the same on every CPU:
 * results do not depend on the vector width. Included once per scalar type (no guard).
 */
#ifndef EMBER_LANES
#define EMBER_LANES 16

/* The lanes' total, added pairwise (a fixed order). */
static inline double ember_lanes_total(const double *acc) {
    double t[EMBER_LANES];
    for (int k = 0; k < EMBER_LANES; k++) t[k] = acc[k];
    for (int w = EMBER_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) t[k] += t[k + w];
    return t[0];
}
#endif

/* acc[j % LANES] += x[j] for j < n (n counted from a lane boundary). */
static inline void FN(acc_sum)(double *restrict acc, const scalar_t *restrict x, int64_t n) {
    int64_t j = 0;
    for (; j + EMBER_LANES <= n; j += EMBER_LANES)
        for (int k = 0; k < EMBER_LANES; k++) acc[k] += (double)x[j + k];
    for (int k = 0; j + k < n; k++) acc[k] += (double)x[j + k];
}

/* acc[j % LANES] += (x[j] - mean)^2, the difference and square in double. */
static inline void FN(acc_sq_dev)(double *restrict acc, const scalar_t *restrict x, int64_t n,
                                  double mean) {
    int64_t j = 0;
    for (; j + EMBER_LANES <= n; j += EMBER_LANES)
        for (int k = 0; k < EMBER_LANES; k++) {
            const double d = (double)x[j + k] - mean;
            acc[k] += d * d;
        }
    for (int k = 0; j + k < n; k++) {
        const double d = (double)x[j + k] - mean;
        acc[k] += d * d;
    }
}

/* The mean and 1 / sqrt(variance + eps) of a row of n values, each rounded to scalar_t as
 * layer norm and group norm round them: the sums in double over the lanes, the deviations
 * from the rounded mean. */
static inline void FN(row_mean_rstd)(const scalar_t *restrict x, int64_t n, double eps,
                                     scalar_t *mean_out, scalar_t *rstd_out) {
    double acc[EMBER_LANES] = {0};
    FN(acc_sum)(acc, x, n);
    const scalar_t mean = (scalar_t)(ember_lanes_total(acc) / (double)n);
    double sq[EMBER_LANES] = {0};
    FN(acc_sq_dev)(sq, x, n, (double)mean);
    const scalar_t var = (scalar_t)(ember_lanes_total(sq) / (double)n);
    *mean_out = mean;
    *rstd_out = (scalar_t)1 / (scalar_t)sqrt((double)(var + (scalar_t)eps));
}

/* acc[j % LANES] += x[j] and dot[j % LANES] += x[j] * y[j], in double. */
static inline void FN(acc_sum_dot)(double *restrict acc, double *restrict dot,
                                   const scalar_t *restrict x, const scalar_t *restrict y,
                                   int64_t n) {
    int64_t j = 0;
    for (; j + EMBER_LANES <= n; j += EMBER_LANES)
        for (int k = 0; k < EMBER_LANES; k++) {
            acc[k] += (double)x[j + k];
            dot[k] += (double)x[j + k] * (double)y[j + k];
        }
    for (int k = 0; j + k < n; k++) {
        acc[k] += (double)x[j + k];
        dot[k] += (double)x[j + k] * (double)y[j + k];
    }
}
