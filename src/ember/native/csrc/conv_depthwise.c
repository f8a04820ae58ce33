/* conv_depthwise.c: depthwise convolutions, part of conv.c (included there). */

/* --- depthwise: one tap at a time over each plane, padding never read ----------------- */

typedef struct {
    const scalar_t *x, *w, *b; /* b: the bias, or NULL */
    scalar_t *out;
    const int64_t *p;
    atomic_int *failed; /* set by a task whose scratch could not be had */
} FN(depthwise_args);

/* out plane (c's output) of sample n: sum over taps in order of w[t] x[tap's positions]. */
static void FN(depthwise_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(depthwise_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD, *xs = p + G_XS;
    const int64_t c = p[G_C], K = k[0] * k[1] * k[2], L = out[0] * out[1] * out[2];
    const int64_t step = st[2] * xs[4];
    for (int64_t nc = lo; nc < hi; nc++) {
        const int64_t ni = nc / c, ci = nc % c;
        const scalar_t *src = a->x + ni * xs[0] + ci * xs[1];
        const scalar_t *wc = a->w + ci * K;
        scalar_t *dst = a->out + nc * L;
        for (int64_t i = 0; i < L; i++) dst[i] = 0;
        int64_t t = 0;
        for (int64_t t0 = 0; t0 < k[0]; t0++)
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, t++) {
                    int64_t z0, z1, y0, y1, q0, q1;
                    conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                    conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                    conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                    const scalar_t wt = wc[t];
                    for (int64_t z = z0; z < z1; z++) {
                        const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                        for (int64_t y = y0; y < y1; y++) {
                            const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                            const scalar_t *s = src + iz * xs[2] + iy * xs[3] +
                                                (q0 * st[2] - pd[2] + t2 * dl[2]) * xs[4];
                            scalar_t *d = dst + (z * out[1] + y) * out[2];
                            FN(row_axpy)(d + q0, 1, wt, s, step, q1 - q0);
                        }
                    }
                }
        if (a->b) FN(add_bias)(dst, a->b + ci, 1, 1, L);
    }
}

int FN(depthwise_forward)(const scalar_t *x, const scalar_t *w, const scalar_t *b,
                          scalar_t *out, const int64_t *p) {
    atomic_int failed = 0;
    FN(depthwise_args) a = {x, w, b, out, p, &failed};
    const int64_t L = p[G_OUT] * p[G_OUT + 1] * p[G_OUT + 2];
    ember_parallel_for(FN(depthwise_task), &a, p[G_N] * p[G_C], L >= 4096 ? 1 : 4096 / L);
    return atomic_load(&failed);
}

/* dx plane (contiguous) = sum over taps in order of w[t] gy at the positions the tap read. */
static void FN(depthwise_input_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(depthwise_args) *a = ctx; /* x: gy, out: dx */
    const int64_t *p = a->p;
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD;
    const int64_t c = p[G_C], K = k[0] * k[1] * k[2], L = out[0] * out[1] * out[2];
    const int64_t plane = in[0] * in[1] * in[2];
    for (int64_t nc = lo; nc < hi; nc++) {
        const scalar_t *src = a->x + nc * L, *wc = a->w + (nc % c) * K;
        scalar_t *dst = a->out + nc * plane;
        for (int64_t i = 0; i < plane; i++) dst[i] = 0;
        int64_t t = 0;
        for (int64_t t0 = 0; t0 < k[0]; t0++)
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, t++) {
                    int64_t z0, z1, y0, y1, q0, q1;
                    conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                    conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                    conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                    const scalar_t wt = wc[t];
                    for (int64_t z = z0; z < z1; z++) {
                        const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                        for (int64_t y = y0; y < y1; y++) {
                            const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                            scalar_t *d = dst + (iz * in[1] + iy) * in[2] +
                                          q0 * st[2] - pd[2] + t2 * dl[2];
                            const scalar_t *s = src + (z * out[1] + y) * out[2];
                            FN(row_axpy)(d, st[2], wt, s + q0, 1, q1 - q0);
                        }
                    }
                }
    }
}

int FN(depthwise_input_grad)(const scalar_t *gy, const scalar_t *w, scalar_t *dx,
                              const int64_t *p) {
    atomic_int failed = 0;
    FN(depthwise_args) a = {gy, w, NULL, dx, p, &failed};
    const int64_t plane = p[G_IN] * p[G_IN + 1] * p[G_IN + 2];
    ember_parallel_for(FN(depthwise_input_task), &a, p[G_N] * p[G_C],
                       plane >= 4096 ? 1 : 4096 / EMBER_MAX(plane, 1));
    return atomic_load(&failed);
}

/* acc[q] += gy[q] x[q * step] for q < n, in double. */
static inline void FN(dot_lanes)(double *restrict acc, const scalar_t *restrict gy,
                                 const scalar_t *restrict x, int64_t step, int64_t n) {
    if (step == 1)
        for (int64_t q = 0; q < n; q++) acc[q] += (double)gy[q] * (double)x[q];
    else
        for (int64_t q = 0; q < n; q++) acc[q] += (double)gy[q] * (double)x[q * step];
}

/* dw[c, t] = sum over the batch and the positions the tap read of gy x, in double: one
 * accumulator per output column (summed over rows and samples), the columns added in
 * order at the end; a channel per task (no sums across threads). */
static void FN(depthwise_weight_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(depthwise_args) *a = ctx; /* x, w: gy, out: dw */
    const int64_t *p = a->p;
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD, *xs = p + G_XS;
    const int64_t c = p[G_C], n = p[G_N], K = k[0] * k[1] * k[2];
    const int64_t L = out[0] * out[1] * out[2];
    const int64_t step = st[2] * xs[4];
    double *acc = conv_scratch(out[2], sizeof(double));
    if (!acc) {
        atomic_store(a->failed, 1);
        goto done;
    }
    for (int64_t ci = lo; ci < hi; ci++) {
        int64_t t = 0;
        for (int64_t t0 = 0; t0 < k[0]; t0++)
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, t++) {
                    int64_t z0, z1, y0, y1, q0, q1;
                    conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                    conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                    conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                    for (int64_t q = 0; q < out[2]; q++) acc[q] = 0;
                    for (int64_t ni = 0; ni < n; ni++) {
                        const scalar_t *src = a->x + ni * xs[0] + ci * xs[1];
                        const scalar_t *g = a->w + (ni * c + ci) * L;
                        for (int64_t z = z0; z < z1; z++) {
                            const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                            for (int64_t y = y0; y < y1; y++) {
                                const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                                FN(dot_lanes)(acc + q0, g + (z * out[1] + y) * out[2] + q0,
                                              src + iz * xs[2] + iy * xs[3] +
                                                  (q0 * st[2] - pd[2] + t2 * dl[2]) * xs[4],
                                              step, q1 - q0);
                            }
                        }
                    }
                    double total = 0;
                    for (int64_t q = 0; q < out[2]; q++) total += acc[q];
                    a->out[ci * K + t] = (scalar_t)total;
                }
    }
done:
    ember_scratch_free(acc);
}

int FN(depthwise_weight_grad)(const scalar_t *x, const scalar_t *gy, scalar_t *dw,
                               const int64_t *p) {
    atomic_int failed = 0;
    FN(depthwise_args) a = {x, gy, NULL, dw, p, &failed};
    ember_parallel_for(FN(depthwise_weight_task), &a, p[G_C], 1);
    return atomic_load(&failed);
}
