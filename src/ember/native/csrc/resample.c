/* resample.c: interpolate's resampling passes (nn/_functional/interpolate.py) and their
 * backward. Written once against scalar_t and FN(name); kernels.py compiles it for float
 * and double.
 *
 * A pass resizes one dim of a contiguous array seen as (outer, n_in, inner) into
 * (outer, n_out, inner): output o reads the input positions idx[o, k], k < K, with weights
 * w[o, k] (both (n_out, K), row-major). Two ways of adding the taps, those of the NumPy
 * twins, so the same bits:
 * - linear (K = 2): fma(w0, t0, w1 * t1), as ATen's contracted kernels round;
 * - ordered sum: w0 t0 + w1 t1 + ... in k order, unfused; a tap k >= count[o] (antialias
 *   padding) adds +0.0, as the NumPy twin's `where(valid, term, 0)` does.
 * Bilinear in one step reads four taps per output with weights hw_a * ww_b (rounded in
 * scalar_t), added fma(w00, t00, w01 t01), then fma'd with w10 t10 and w11 t11.
 *
 * Backward of a pass: dx zeroed, then for o in order and k in order dx[idx[o, k]] +=
 * w[o, k] * g[o] (unfused). Items are (outer row, block of inner columns): each element
 * of dx is written by one item, in that fixed order, so any thread count gives the same
 * bits.
 */
#include "ember.h"

typedef struct {
    const scalar_t *x;
    scalar_t *out;
    const int64_t *idx;
    const scalar_t *w;
    const int64_t *count;
    int64_t n_in, inner, n_out, k, fused;
} FN(pass_args);

/* A pass over the last dim (inner = 1): the items of one row at a time. */
static void FN(pass_rows)(const FN(pass_args) *a, int64_t lo, int64_t hi) {
    const int64_t n_in = a->n_in, n_out = a->n_out, K = a->k;
    for (int64_t item = lo; item < hi;) {
        const int64_t r = item / n_out, o0 = item % n_out;
        const int64_t o1 = EMBER_MIN(n_out, o0 + (hi - item));
        const scalar_t *x = a->x + r * n_in;
        scalar_t *restrict out = a->out + r * n_out;
        if (a->fused) {
            for (int64_t o = o0; o < o1; o++)
                out[o] = EMBER_FMA_T(a->w[2 * o], x[a->idx[2 * o]],
                                     x[a->idx[2 * o + 1]] * a->w[2 * o + 1]);
        } else {
            for (int64_t o = o0; o < o1; o++) {
                const int64_t count = a->count ? a->count[o] : K;
                const int64_t *ix = a->idx + o * K;
                const scalar_t *wo = a->w + o * K;
                scalar_t acc = count > 0 ? x[ix[0]] * wo[0] : (scalar_t)0;
                for (int64_t k = 1; k < K; k++)
                    acc = acc + (k < count ? x[ix[k]] * wo[k] : (scalar_t)0);
                out[o] = acc;
            }
        }
        item += o1 - o0;
    }
}

static void FN(pass_task)(void *p, int64_t lo, int64_t hi) {
    const FN(pass_args) *a = p;
    const int64_t n_in = a->n_in, inner = a->inner, n_out = a->n_out, K = a->k;
    if (inner == 1) {
        FN(pass_rows)(a, lo, hi);
        return;
    }
    for (int64_t item = lo; item < hi; item++) {
        const int64_t r = item / n_out, o = item % n_out;
        const scalar_t *x = a->x + r * n_in * inner;
        scalar_t *restrict out = a->out + (r * n_out + o) * inner;
        const int64_t *ix = a->idx + o * K;
        const scalar_t *wo = a->w + o * K;
        if (a->fused) {
            const scalar_t *t0 = x + ix[0] * inner, *t1 = x + ix[1] * inner;
            const scalar_t w0 = wo[0], w1 = wo[1];
            for (int64_t j = 0; j < inner; j++)
                out[j] = EMBER_FMA_T(w0, t0[j], t1[j] * w1);
            continue;
        }
        const int64_t count = a->count ? a->count[o] : K;
        const scalar_t *t0 = x + ix[0] * inner;
        const scalar_t w0 = wo[0];
        if (count > 0) {
            for (int64_t j = 0; j < inner; j++) out[j] = t0[j] * w0;
        } else {
            for (int64_t j = 0; j < inner; j++) out[j] = 0;
        }
        for (int64_t k = 1; k < K; k++) {
            const scalar_t *t = x + ix[k] * inner;
            const scalar_t wk = wo[k];
            if (k < count) {
                for (int64_t j = 0; j < inner; j++) out[j] = out[j] + t[j] * wk;
            } else {
                for (int64_t j = 0; j < inner; j++) out[j] = out[j] + (scalar_t)0;
            }
        }
    }
}

/* p: outer, n_in, inner, n_out, K, fused. count: NULL (every tap) or (n_out,). */
void FN(resample_pass)(const scalar_t *x, scalar_t *out, const int64_t *idx,
                       const scalar_t *w, const int64_t *count, const int64_t *p) {
    FN(pass_args) a = {x, out, idx, w, count, p[1], p[2], p[3], p[4], p[5]};
    ember_parallel_for(FN(pass_task), &a, p[0] * p[3],
                       EMBER_MAX(1, 16384 / (p[2] * p[4] + 1)));
}

typedef struct {
    const scalar_t *x;
    scalar_t *out;
    const int64_t *hi, *wi;
    const scalar_t *hw, *ww;
    int64_t h, w, oh, ow, inner;
} FN(bilinear_args);

/* Channels-last: every output cell is `inner` channels wide. */
static void FN(bilinear_cells)(const FN(bilinear_args) *a, int64_t item) {
    const int64_t h = a->h, w = a->w, oh = a->oh, ow = a->ow, c = a->inner;
    const int64_t plane = item / oh, i = item % oh;
    const scalar_t *r0 = a->x + (plane * h + a->hi[2 * i]) * w * c;
    const scalar_t *r1 = a->x + (plane * h + a->hi[2 * i + 1]) * w * c;
    const scalar_t h0 = a->hw[2 * i], h1 = a->hw[2 * i + 1];
    for (int64_t j = 0; j < ow; j++) {
        const scalar_t *t00 = r0 + a->wi[2 * j] * c, *t01 = r0 + a->wi[2 * j + 1] * c;
        const scalar_t *t10 = r1 + a->wi[2 * j] * c, *t11 = r1 + a->wi[2 * j + 1] * c;
        const scalar_t v0 = a->ww[2 * j], v1 = a->ww[2 * j + 1];
        const scalar_t w00 = h0 * v0, w01 = h0 * v1, w10 = h1 * v0, w11 = h1 * v1;
        scalar_t *restrict out = a->out + (item * ow + j) * c;
        for (int64_t k = 0; k < c; k++) {
            scalar_t acc = EMBER_FMA_T(w00, t00[k], t01[k] * w01);
            acc = EMBER_FMA_T(w10, t10[k], acc);
            out[k] = EMBER_FMA_T(w11, t11[k], acc);
        }
    }
}

static void FN(bilinear_task)(void *p, int64_t lo, int64_t hi) {
    const FN(bilinear_args) *a = p;
    const int64_t h = a->h, w = a->w, oh = a->oh, ow = a->ow;
    if (a->inner != 1) {
        for (int64_t item = lo; item < hi; item++) FN(bilinear_cells)(a, item);
        return;
    }
    for (int64_t item = lo; item < hi; item++) {
        const int64_t plane = item / oh, i = item % oh;
        const scalar_t *r0 = a->x + (plane * h + a->hi[2 * i]) * w;
        const scalar_t *r1 = a->x + (plane * h + a->hi[2 * i + 1]) * w;
        const scalar_t h0 = a->hw[2 * i], h1 = a->hw[2 * i + 1];
        scalar_t *restrict out = a->out + item * ow;
        for (int64_t j = 0; j < ow; j++) {
            const int64_t c0 = a->wi[2 * j], c1 = a->wi[2 * j + 1];
            const scalar_t v0 = a->ww[2 * j], v1 = a->ww[2 * j + 1];
            scalar_t acc = EMBER_FMA_T(h0 * v0, r0[c0], r0[c1] * (h0 * v1));
            acc = EMBER_FMA_T(h1 * v0, r1[c0], acc);
            out[j] = EMBER_FMA_T(h1 * v1, r1[c1], acc);
        }
    }
}

/* x (planes, h, w, inner) contiguous -> out (planes, oh, ow, inner); hi, hw: (oh, 2);
 * wi, ww: (ow, 2). p: planes, h, w, oh, ow, inner. */
void FN(resample_bilinear)(const scalar_t *x, scalar_t *out, const int64_t *hi,
                           const scalar_t *hw, const int64_t *wi, const scalar_t *ww,
                           const int64_t *p) {
    FN(bilinear_args) a = {x, out, hi, wi, hw, ww, p[1], p[2], p[3], p[4], p[5]};
    ember_parallel_for(FN(bilinear_task), &a, p[0] * p[3],
                       EMBER_MAX(1, 4096 / (p[4] * p[5] + 1)));
}

enum { BLOCK = 512 };  /* inner columns per backward item */

typedef struct {
    const scalar_t *g;
    scalar_t *dx;
    const int64_t *idx;
    const scalar_t *w;
    const int64_t *count;
    int64_t n_in, inner, n_out, k, blocks;
} FN(back_args);

static void FN(back_task)(void *p, int64_t lo, int64_t hi) {
    const FN(back_args) *a = p;
    const int64_t n_in = a->n_in, inner = a->inner, n_out = a->n_out, K = a->k;
    for (int64_t item = lo; item < hi; item++) {
        const int64_t r = item / a->blocks, b = item % a->blocks;
        const int64_t j0 = b * BLOCK, j1 = EMBER_MIN(inner, j0 + BLOCK);
        const scalar_t *g = a->g + r * n_out * inner;
        scalar_t *dx = a->dx + r * n_in * inner;
        for (int64_t i = 0; i < n_in; i++)
            for (int64_t j = j0; j < j1; j++) dx[i * inner + j] = 0;
        for (int64_t o = 0; o < n_out; o++) {
            const int64_t count = a->count ? EMBER_MIN(a->count[o], K) : K;
            const scalar_t *go = g + o * inner;
            for (int64_t k = 0; k < count; k++) {
                scalar_t *restrict d = dx + a->idx[o * K + k] * inner;
                const scalar_t wk = a->w[o * K + k];
                for (int64_t j = j0; j < j1; j++) d[j] = d[j] + go[j] * wk;
            }
        }
    }
}

/* g (outer, n_out, inner) -> dx (outer, n_in, inner), both contiguous. p as for
 * resample_pass (fused is ignored). */
void FN(resample_pass_backward)(const scalar_t *g, scalar_t *dx, const int64_t *idx,
                                const scalar_t *w, const int64_t *count, const int64_t *p) {
    const int64_t blocks = (p[2] + BLOCK - 1) / BLOCK;
    FN(back_args) a = {g, dx, idx, w, count, p[1], p[2], p[3], p[4], blocks};
    const int64_t work = EMBER_MIN(p[2], BLOCK) * (p[1] + p[3] * p[4]);
    ember_parallel_for(FN(back_task), &a, p[0] * blocks, EMBER_MAX(1, 16384 / (work + 1)));
}
