/* conv.c: convolutions (1-, 2- and 3-d, grouped, strided, dilated, padded) forward and
 * backward. Written once against scalar_t and FN(name); kernels.py compiles it for float
 * and double.
 *
 * im2col and col2im are done here, the products by NumPy's BLAS (blas.h), or by ember's
 * own float32 product (gemm.c) where the plan says so (G_OWN: the machine's rule, off under
 * deterministic algorithms), one chunk of
 * the batch at a time on each of ember's threads (BLAS held to one thread meanwhile), into
 * a scratch buffer of the thread's own: nothing crosses back to Python between the copies
 * and the products. 2-d convolutions of stride 1 or 2 copy each plane once into a buffer
 * with zero margins (split into even and odd columns at stride 2), from which every tap's
 * columns are fixed-length runs (conv_split). Depthwise convolutions (one input channel per group, one output
 * channel per input channel) are computed directly, tap by tap, and never touch a padded
 * position: as PyTorch's depthwise kernel, a non-finite weight does not reach the outputs
 * whose window hangs over the padding.
 *
 * Shapes are given as one int64 array (`conv_geo`): a 1- or 2-d convolution is a 3-d one
 * with leading spatial dims of size 1. x is read through its element strides (any layout,
 * broadcast and negative strides included); w, the output and the output gradient are
 * contiguous.
 *
 * Products use `chunk` samples at once (the columns of `chunk` samples side by side):
 * the caller picks it from the shape alone, so a result does not depend on the number of
 * threads. The weight gradient sums the chunks into `parts` partial gradients (also a
 * function of the shape), added in order at the end.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Keeps GCC from turning the short copy and zeroing loops here (a tap's or a tile row's
 * 4-32 elements) into calls to memcpy and memset, which cost more than the loop at these
 * lengths (measured: a stride-2 3x3 forward, 3.7 -> 3.1 ms). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

#include "blas.h"
#include "ember.h"

#ifndef EMBER_CONV_GEO
#define EMBER_CONV_GEO
enum {
    G_N, G_C, G_O, G_GROUPS,
    G_IN, G_K = G_IN + 3, G_OUT = G_K + 3, G_STRIDE = G_OUT + 3, G_DIL = G_STRIDE + 3,
    G_PAD = G_DIL + 3, G_XS = G_PAD + 3, G_CHUNK = G_XS + 5, G_PARTS, G_OWN, G_PACKED, G_LEN
};

/* The range [q0, q1) of output positions along one dim whose input index
 * q * s - p + t * d falls inside [0, size). */
static inline void conv_valid(int64_t out, int64_t size, int64_t s, int64_t p, int64_t off,
                              int64_t *q0, int64_t *q1) {
    /* index = q s + (off - p); need 0 <= index < size */
    int64_t base = off - p;
    int64_t lo = base >= 0 ? 0 : (-base + s - 1) / s;
    int64_t hi = size - base <= 0 ? 0 : (size - base + s - 1) / s;
    if (lo > out) lo = out;
    if (hi > out) hi = out;
    if (hi < lo) hi = lo;
    *q0 = lo;
    *q1 = hi;
}

/* floor(v / 2) for any sign */
static inline int64_t conv_floor2(int64_t v) { return (v - (((v % 2) + 2) % 2)) / 2; }

static void *conv_scratch(int64_t elems, size_t size) {
    return ember_scratch((size_t)(elems > 0 ? elems : 1) * size);
}

#ifdef __AVX__
#include <immintrin.h>
/* d (8 x 8, rows ldd apart) = s (8 x 8, rows lds apart) transposed, in registers. */
static inline __attribute__((always_inline)) void conv_transpose8_f32(const float *s, int64_t lds,
                                                                    float *d, int64_t ldd) {
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(s + i * lds);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(d + i * ldd, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_storeu_ps(d + (i + 4) * ldd, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
    }
}
#endif
#endif

/* dst[c ldd + r] = src[r lds + c step] for r < R, c < C: a transpose by 8 x 8 tiles (in
 * registers where AVX has them, else through a local tile), so that both sides are read
 * and written a run of 8 at a time rather than one element per cache line. */
static void FN(transpose)(const scalar_t *restrict src, int64_t lds, int64_t step,
                          scalar_t *restrict dst, int64_t ldd, int64_t R, int64_t C) {
    int64_t r0 = 0;
    for (; r0 + 8 <= R && step == 1; r0 += 8) {
        int64_t c0 = 0;
        for (; c0 + 8 <= C; c0 += 8) {
            const scalar_t *s = src + r0 * lds + c0;
            scalar_t *d = dst + c0 * ldd + r0;
#ifdef __AVX__
            if (sizeof(scalar_t) == sizeof(float)) {
                conv_transpose8_f32((const float *)s, lds, (float *)d, ldd);
                continue;
            }
#endif
            scalar_t t[8][8];
            for (int r = 0; r < 8; r++)
                for (int c = 0; c < 8; c++) t[c][r] = s[r * lds + c];
            for (int c = 0; c < 8; c++)
                for (int r = 0; r < 8; r++) d[c * ldd + r] = t[c][r];
        }
        for (; c0 < C; c0++)
            for (int64_t r = r0; r < r0 + 8; r++) dst[c0 * ldd + r] = src[r * lds + c0];
    }
    for (; r0 < R; r0++)
        for (int64_t c = 0; c < C; c++) dst[c * ldd + r0] = src[r0 * lds + c * step];
}

/* A product through BLAS, or ember's own where the plan says (G_OWN): read from the `p`
 * in scope. */
#define GEMM(...) FN(ember_product)((int)p[G_OWN], __VA_ARGS__)

/* Row steps over n elements, restrict parameters so that the compiler vectorises them
 * once inlined: a strided copy, a scatter-add, and the same scaled by a weight. */
static inline void FN(row_copy)(scalar_t *restrict d, const scalar_t *restrict s, int64_t step,
                                int64_t n) {
    for (int64_t q = 0; q < n; q++) d[q] = s[q * step];
}

static inline void FN(row_add)(scalar_t *restrict d, int64_t step, const scalar_t *restrict s,
                               int64_t n) {
    if (step == 1)
        for (int64_t q = 0; q < n; q++) d[q] += s[q];
    else
        for (int64_t q = 0; q < n; q++) d[q * step] += s[q];
}

static inline void FN(row_axpy)(scalar_t *restrict d, int64_t dstep, scalar_t wt,
                                const scalar_t *restrict s, int64_t sstep, int64_t n) {
    if (dstep == 1 && sstep == 1)
        for (int64_t q = 0; q < n; q++) d[q] += wt * s[q];
    else
        for (int64_t q = 0; q < n; q++) d[q * dstep] += wt * s[q * sstep];
}

/* out (samples, o, L) += bias along o: a second rounding, as a separate `out + bias`. */
static void FN(add_bias)(scalar_t *out, const scalar_t *bias, int64_t samples, int64_t o,
                         int64_t L) {
    for (int64_t j = 0; j < samples; j++)
        for (int64_t r = 0; r < o; r++) {
            scalar_t *restrict d = out + (j * o + r) * L;
            const scalar_t br = bias[r];
            for (int64_t i = 0; i < L; i++) d[i] += br;
        }
}

/* split (rows, 2, half) = each of `rows` rows of x (element step 1, w long, rows `rstep`
 * apart) as its even elements, then its odd ones; half = (w + 1) / 2. */
static void FN(split_rows)(const scalar_t *x, int64_t rstep, int64_t rows, int64_t w,
                           int64_t half, scalar_t *restrict split) {
    for (int64_t r = 0; r < rows; r++) {
        const scalar_t *restrict src = x + r * rstep;
        scalar_t *restrict e = split + r * 2 * half, *restrict o = e + half;
        for (int64_t k = 0; k < w / 2; k++) e[k] = src[2 * k], o[k] = src[2 * k + 1];
        if (w & 1) e[half - 1] = src[w - 1];
    }
}

/* im2col (below) where the last dim has stride 2 and x's elements are adjacent along it:
 * each (sample, channel) plane is first split into its rows' even and odd elements, so a
 * tap's row is one contiguous copy (the stride-2 gather done once per plane, not once per
 * tap). The same columns as the general loop. Answers 0 where it has no scratch. */
static int FN(im2col_stride2)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b,
                              int64_t c0, int64_t cg, scalar_t *cols) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD, *xs = p + G_XS;
    const int64_t L = out[0] * out[1] * out[2], ld = b * L, K = k[0] * k[1] * k[2];
    const int64_t half = (in[2] + 1) / 2, rows = in[0] * in[1];
    scalar_t *split = conv_scratch(rows * 2 * half, sizeof(scalar_t));
    if (!split) return 0;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t j = 0; j < b; j++) {
            const scalar_t *src = x + (n0 + j) * xs[0] + (c0 + cl) * xs[1];
            for (int64_t z = 0; z < in[0]; z++)
                FN(split_rows)(src + z * xs[2], xs[3], in[1], in[2], half,
                               split + z * in[1] * 2 * half);
            scalar_t *row = cols + cl * K * ld + j * L;
            for (int64_t t0 = 0; t0 < k[0]; t0++)
                for (int64_t t1 = 0; t1 < k[1]; t1++)
                    for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                        int64_t z0, z1, y0, y1, q0, q1;
                        conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                        conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                        conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                        /* input column 2 q + e, e = t2 dl - pad: element q + (e - par) / 2
                         * of the rows' parity-par half */
                        const int64_t e = t2 * dl[2] - pd[2], par = ((e % 2) + 2) % 2;
                        const int64_t off = (e - par) / 2 + par * half;
                        for (int64_t z = 0; z < out[0]; z++) {
                            const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                            for (int64_t y = 0; y < out[1]; y++) {
                                scalar_t *restrict d = row + (z * out[1] + y) * out[2];
                                if (z < z0 || z >= z1 || y < y0 || y >= y1 || q0 == q1) {
                                    memset(d, 0, (size_t)out[2] * sizeof(scalar_t));
                                    continue;
                                }
                                const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                                const scalar_t *restrict s =
                                    split + (iz * in[1] + iy) * 2 * half + off;
                                for (int64_t q = 0; q < q0; q++) d[q] = 0;
                                memcpy(d + q0, s + q0, (size_t)(q1 - q0) * sizeof(scalar_t));
                                for (int64_t q = q1; q < out[2]; q++) d[q] = 0;
                            }
                        }
                    }
        }
    ember_scratch_free(split);
    return 1;
}

#ifndef EMBER_CONV_SPLIT
#define EMBER_CONV_SPLIT
/* A 2-d (or 1-d) convolution of stride s = 1 or 2 in both spatial dims, through each plane
 * copied inside margins of zeros (rows and columns all around) that hold every padded
 * position a tap reads, its rows split by stride 2 into their even and odd elements: then a
 * tap's row of columns is a fixed-length run of the split plane, with no bounds to test.
 * Row r of the plane (r < h) is split row top + r; its element s k + parity is at
 * parity * width + left + k. */
typedef struct {
    int64_t s, top, rows, left, width, rstep, half;
} conv_split;

/* floor(v / s), s = 1 or 2, for any sign */
static inline int64_t conv_floor_s(int64_t v, int64_t s) {
    return s == 1 ? v : conv_floor2(v);
}

static int conv_split_plan(const int64_t *p, conv_split *g) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD;
    /* (one tap reads each input at most once: copying the plane first would not pay) */
    if (in[0] != 1 || k[0] != 1 || k[1] * k[2] == 1 || st[1] != st[2] || st[1] < 1 ||
        st[1] > 2)
        return 0;
    const int64_t s = g->s = st[1];
    /* taps read rows s y + e1 and columns s q + e2, e = t dl - pad */
    const int64_t e1lo = -pd[1], e1hi = (k[1] - 1) * dl[1] - pd[1];
    const int64_t e2lo = -pd[2], e2hi = (k[2] - 1) * dl[2] - pd[2];
    g->half = (in[2] + s - 1) / s;
    g->top = EMBER_MAX(0, -e1lo);
    g->rows = g->top + EMBER_MAX(in[1], s * (out[1] - 1) + e1hi + 1);
    /* half-row elements read: floor(e2lo / s) .. ow - 1 + floor(e2hi / s) */
    g->left = EMBER_MAX(0, -conv_floor_s(e2lo, s));
    g->width = g->left + EMBER_MAX(g->half, out[2] + conv_floor_s(e2hi, s));
    g->rstep = s * g->width;
    return 1;
}

/* Where tap (t1, t2)'s first output row reads in the split plane. */
static inline int64_t conv_split_tap(const int64_t *p, const conv_split *g, int64_t t1,
                                      int64_t t2) {
    const int64_t e1 = t1 * p[G_DIL + 1] - p[G_PAD + 1], e2 = t2 * p[G_DIL + 2] - p[G_PAD + 2];
    const int64_t k2 = conv_floor_s(e2, g->s);
    return (g->top + e1) * g->rstep + (e2 - g->s * k2) * g->width + g->left + k2;
}
#endif

/* d (oh rows of ow, contiguous) = oh runs of ow elements of s, `step` apart; inlined, so
 * that a constant ow becomes straight vector moves. */
static inline __attribute__((always_inline)) void FN(tap_rows)(
    scalar_t *restrict d, const scalar_t *restrict s, int64_t step, int64_t oh, int64_t ow) {
    for (int64_t y = 0; y < oh; y++)
        for (int64_t q = 0; q < ow; q++) d[y * ow + q] = s[y * step + q];
}

/* The adjoint of tap_rows: oh runs of ow elements of d, `step` apart, += s's rows. */
static inline __attribute__((always_inline)) void FN(tap_rows_add)(
    scalar_t *restrict d, int64_t step, const scalar_t *restrict s, int64_t oh, int64_t ow) {
    for (int64_t y = 0; y < oh; y++)
        for (int64_t q = 0; q < ow; q++) d[y * step + q] += s[y * ow + q];
}

/* The interior of split plane `split` (conv_split) = one (sample, channel) plane of x, rows
 * `rstep` apart, elements adjacent along a row; the margins are left as they are (zeros). */
static inline void FN(split_plane)(const scalar_t *src, int64_t rstep, int64_t h, int64_t w,
                                   const conv_split *g, scalar_t *split) {
    for (int64_t iy = 0; iy < h; iy++) {
        const scalar_t *restrict r = src + iy * rstep;
        scalar_t *restrict e = split + (g->top + iy) * g->rstep + g->left,
                           *restrict o = e + g->width;
        if (g->s == 1) {
            memcpy(e, r, (size_t)w * sizeof(scalar_t));
            continue;
        }
        for (int64_t q = 0; q < w / 2; q++) e[q] = r[2 * q], o[q] = r[2 * q + 1];
        if (w & 1) e[g->half - 1] = r[w - 1];
    }
}

/* im2col (below) through split planes (conv_split), x's elements adjacent along a row: the
 * same columns as the general loop. Answers 0 where it has no scratch. */
static int FN(im2col_split)(const scalar_t *x, const int64_t *p, const conv_split *g,
                            int64_t n0, int64_t b, int64_t c0, int64_t cg, scalar_t *cols) {
    const int64_t *k = p + G_K, *xs = p + G_XS;
    const int64_t h = p[G_IN + 1], w = p[G_IN + 2], oh = p[G_OUT + 1], ow = p[G_OUT + 2];
    const int64_t L = oh * ow, ld = b * L, K = k[1] * k[2], rstep = g->rstep;
    scalar_t *split = conv_scratch(g->rows * rstep, sizeof(scalar_t));
    if (!split) return 0;
    memset(split, 0, (size_t)(g->rows * rstep) * sizeof(scalar_t));
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t j = 0; j < b; j++) {
            FN(split_plane)(x + (n0 + j) * xs[0] + (c0 + cl) * xs[1], xs[3], h, w, g, split);
            scalar_t *row = cols + cl * K * ld + j * L;
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    const scalar_t *base = split + conv_split_tap(p, g, t1, t2);
                    switch (ow) { /* (fixed lengths: whole vector moves, no loop) */
                    case 8: FN(tap_rows)(row, base, g->s * rstep, oh, 8); break;
                    case 16: FN(tap_rows)(row, base, g->s * rstep, oh, 16); break;
                    default: FN(tap_rows)(row, base, g->s * rstep, oh, ow);
                    }
                }
        }
    ember_scratch_free(split);
    return 1;
}

/* col2im (below) through split planes (conv_split): each tap's columns added in order into
 * the split plane, then its interior written to dx's plane (overwritten, not added: dx
 * needs no zeroing). Each element sums the same terms in the same order as the general
 * loop, from zero (the same bits); padded positions land in the margins, never read.
 * Answers 0 where it has no scratch. */
static int FN(col2im_split)(const scalar_t *cols, const int64_t *p, const conv_split *g,
                            int64_t n0, int64_t b, int64_t c0, int64_t cg, scalar_t *dx) {
    const int64_t *k = p + G_K;
    const int64_t h = p[G_IN + 1], w = p[G_IN + 2], oh = p[G_OUT + 1], ow = p[G_OUT + 2];
    const int64_t L = oh * ow, ld = b * L, K = k[1] * k[2], rstep = g->rstep, c = p[G_C];
    scalar_t *split = conv_scratch(g->rows * rstep, sizeof(scalar_t));
    if (!split) return 0;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t j = 0; j < b; j++) {
            memset(split, 0, (size_t)(g->rows * rstep) * sizeof(scalar_t));
            const scalar_t *row = cols + cl * K * ld + j * L;
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    scalar_t *base = split + conv_split_tap(p, g, t1, t2);
                    switch (ow) { /* (as in im2col_split) */
                    case 8: FN(tap_rows_add)(base, g->s * rstep, row, oh, 8); break;
                    case 16: FN(tap_rows_add)(base, g->s * rstep, row, oh, 16); break;
                    default: FN(tap_rows_add)(base, g->s * rstep, row, oh, ow);
                    }
                }
            scalar_t *dst = dx + ((n0 + j) * c + c0 + cl) * h * w;
            for (int64_t iy = 0; iy < h; iy++) {
                scalar_t *restrict r = dst + iy * w;
                const scalar_t *restrict e = split + (g->top + iy) * rstep + g->left,
                                         *restrict o = e + g->width;
                if (g->s == 1) {
                    memcpy(r, e, (size_t)w * sizeof(scalar_t));
                    continue;
                }
                for (int64_t q = 0; q < w / 2; q++) r[2 * q] = e[q], r[2 * q + 1] = o[q];
                if (w & 1) r[w - 1] = e[g->half - 1];
            }
        }
    ember_scratch_free(split);
    return 1;
}

/* cols (cg K, b L) = the receptive fields of samples n0 .. n0+b, channels c0 .. c0+cg of x:
 * row (channel, tap), column (sample, output position); zeros where a tap reads padding. */
static void FN(im2col)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b, int64_t c0,
                       int64_t cg, scalar_t *cols) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD, *xs = p + G_XS;
    const int64_t L = out[0] * out[1] * out[2], ld = b * L;
    const int64_t step = st[2] * xs[4];
    conv_split g;
    if (xs[4] == 1 && conv_split_plan(p, &g) && FN(im2col_split)(x, p, &g, n0, b, c0, cg, cols))
        return;
    if (st[2] == 2 && xs[4] == 1 && k[0] * k[1] * k[2] > 1 &&
        FN(im2col_stride2)(x, p, n0, b, c0, cg, cols))
        return;
    scalar_t *row = cols;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t t0 = 0; t0 < k[0]; t0++)
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    int64_t z0, z1, y0, y1, q0, q1;
                    conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                    conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                    conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                    for (int64_t j = 0; j < b; j++) {
                        const scalar_t *src = x + (n0 + j) * xs[0] + (c0 + cl) * xs[1];
                        scalar_t *dst = row + j * L;
                        for (int64_t z = 0; z < out[0]; z++) {
                            const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                            for (int64_t y = 0; y < out[1]; y++) {
                                scalar_t *d = dst + (z * out[1] + y) * out[2];
                                if (z < z0 || z >= z1 || y < y0 || y >= y1 || q0 == q1) {
                                    memset(d, 0, (size_t)out[2] * sizeof(scalar_t));
                                    continue;
                                }
                                const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                                const scalar_t *s = src + iz * xs[2] + iy * xs[3] +
                                                    (q0 * st[2] - pd[2] + t2 * dl[2]) * xs[4];
                                for (int64_t q = 0; q < q0; q++) d[q] = 0;
                                if (step == 1)
                                    memcpy(d + q0, s, (size_t)(q1 - q0) * sizeof(scalar_t));
                                else
                                    FN(row_copy)(d + q0, s, step, q1 - q0);
                                for (int64_t q = q1; q < out[2]; q++) d[q] = 0;
                            }
                        }
                    }
                }
}

/* dx (samples n0 .. n0+b, channels c0 .. c0+cg; contiguous) = the adjoint of im2col
 * applied to cols (cg K, b L): each tap's columns added at the positions it read, taps in
 * order, onto zeros. */
static void FN(col2im)(const scalar_t *cols, const int64_t *p, int64_t n0, int64_t b,
                       int64_t c0, int64_t cg, scalar_t *dx) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD;
    const int64_t L = out[0] * out[1] * out[2], ld = b * L;
    const int64_t plane = in[0] * in[1] * in[2], c = p[G_C];
    conv_split g;
    if (conv_split_plan(p, &g) && FN(col2im_split)(cols, p, &g, n0, b, c0, cg, dx)) return;
    for (int64_t j = 0; j < b; j++)
        memset(dx + ((n0 + j) * c + c0) * plane, 0, (size_t)(cg * plane) * sizeof(scalar_t));
    const scalar_t *row = cols;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t t0 = 0; t0 < k[0]; t0++)
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    int64_t z0, z1, y0, y1, q0, q1;
                    conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                    conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                    conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                    if (q0 == q1) continue;
                    for (int64_t j = 0; j < b; j++) {
                        scalar_t *dst = dx + ((n0 + j) * c + c0 + cl) * plane;
                        const scalar_t *src = row + j * L;
                        for (int64_t z = z0; z < z1; z++) {
                            const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                            for (int64_t y = y0; y < y1; y++) {
                                const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                                scalar_t *d = dst + (iz * in[1] + iy) * in[2] +
                                              q0 * st[2] - pd[2] + t2 * dl[2];
                                const scalar_t *s = src + (z * out[1] + y) * out[2];
                                FN(row_add)(d, st[2], s + q0, q1 - q0);
                            }
                        }
                    }
                }
}

/* Whether sample n's channels c0.. of x are themselves the columns of a 1x1 stride-1
 * unpadded convolution: rows of L contiguous elements, one channel after another. */
static int FN(direct_columns)(const int64_t *p) {
    const int64_t *in = p + G_IN, *k = p + G_K, *st = p + G_STRIDE, *pd = p + G_PAD,
                  *xs = p + G_XS, *out = p + G_OUT;
    for (int i = 0; i < 3; i++)
        if (k[i] != 1 || st[i] != 1 || pd[i] != 0 || out[i] != in[i]) return 0;
    return p[G_CHUNK] == 1 && xs[4] == 1 && xs[3] == in[2] && xs[2] == in[1] * in[2] &&
           xs[1] == in[0] * in[1] * in[2];
}

/* --- forward's columns packed straight from split planes (G_PACKED) -------------------
 * Where ember's own product serves a split-plane convolution (conv_split), its panels of
 * columns are written from the planes of the chunk's samples and the group's channels as
 * the product asks for them: the columns are never stored whole, saving im2col's pass
 * over them and the product's copy of them into panels (a 64 -> 128 3x3 stride-2 forward
 * at 16x16, one thread: 2.8 -> 2.3 ms). The product's operands are the same numbers as
 * with im2col, in the same order: the same bits as ember's own product of the columns. */

#ifndef EMBER_CONV_RUNS
#define EMBER_CONV_RUNS
/* A run of a panel's columns along one output row of one sample: `len` columns from
 * `dst` in the panel, read from `src` onwards in the sample's plane of a channel. */
typedef struct {
    int64_t src, dst, len;
} conv_run;

/* The runs of each panel of the product's n columns (sample, then output position). The
 * same for every row of the columns: found once a product, not once a row. */
static void conv_panel_runs(int64_t n, int64_t L, int64_t ow, int64_t vstep,
                            int64_t sample_step, conv_run *runs, int64_t *first,
                            uint8_t *eight) {
    int64_t r = 0, panel = 0;
    for (int64_t p0 = 0; p0 < n; p0 += EMBER_PANEL, panel++) {
        const int64_t end = EMBER_MIN(p0 + EMBER_PANEL, n);
        first[panel] = r;
        eight[panel] = 1;
        for (int64_t j = p0; j < end; r++) {
            const int64_t sample = j / L, pos = j % L, q = pos % ow;
            const int64_t len = EMBER_MIN(ow - q, end - j);
            runs[r] = (conv_run){sample * sample_step + pos / ow * vstep + q, j - p0, len};
            eight[panel] &= len == 8;
            j += len;
        }
    }
    first[panel] = r;
}
#endif

typedef struct {
    const scalar_t *planes; /* (b, cg) split planes of `plane` elements each */
    int64_t plane, K;
    const int64_t *tap;   /* K offsets of each tap's first read in a plane */
    const conv_run *runs; /* every panel's runs, panel after panel */
    const int64_t *first; /* panel i's runs: first[i] .. first[i + 1] - 1 */
    const uint8_t *eight; /* panel i's runs are all 8 columns long */
} FN(packer);

static inline __attribute__((always_inline)) void FN(run_copy)(scalar_t *restrict d,
        const scalar_t *restrict s, int64_t len) {
    for (int64_t q = 0; q < len; q++) d[q] = s[q];
}

static void FN(pack_columns)(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                             void *out) {
    const FN(packer) *c = ctx;
    scalar_t *bp = out;
    for (int64_t jr = 0; jr < nc; jr += EMBER_PANEL, bp += kc * EMBER_PANEL) {
        const int64_t nr = EMBER_MIN(EMBER_PANEL, nc - jr), panel = (j0 + jr) / EMBER_PANEL;
        const conv_run *run = c->runs + c->first[panel];
        const int64_t runs = c->first[panel + 1] - c->first[panel];
        const int eight = c->eight[panel];
        for (int64_t k = 0; k < kc; k++) {
            const int64_t r = k0 + k;
            const scalar_t *base = c->planes + r / c->K * c->plane + c->tap[r % c->K];
            scalar_t *d = bp + k * EMBER_PANEL;
            if (eight) /* (whole vector moves) */
                for (int64_t u = 0; u < runs; u++)
                    FN(run_copy)(d + run[u].dst, base + run[u].src, 8);
            else
                for (int64_t u = 0; u < runs; u++)
                    FN(run_copy)(d + run[u].dst, base + run[u].src, run[u].len);
            for (int64_t j = nr; j < EMBER_PANEL; j++) d[j] = 0;
        }
    }
}

/* out's rows for the chunk (res: og x b L, rows ldc apart) = wg times the columns of
 * samples n0 .. n0+b, channels c0 .. c0+cg, packed from split planes. `planes` holds
 * b cg planes whose margins are zero. Nonzero where the product could not run. */
static int FN(packed_forward)(const scalar_t *x, const int64_t *p, const conv_split *g,
                              int64_t n0, int64_t b, int64_t c0, int64_t cg, int64_t og,
                              const scalar_t *wg, scalar_t *planes, scalar_t *res,
                              int64_t ldc) {
    const int64_t *xs = p + G_XS;
    const int64_t h = p[G_IN + 1], w = p[G_IN + 2], k1 = p[G_K + 1], k2 = p[G_K + 2];
    const int64_t plane = g->rows * g->rstep, K = k1 * k2, ow = p[G_OUT + 2];
    const int64_t L = p[G_OUT + 1] * ow, n = b * L, panels = (n + EMBER_PANEL - 1) / EMBER_PANEL;
    int64_t tap[K];
    for (int64_t t = 0; t < K; t++) tap[t] = conv_split_tap(p, g, t / k2, t % k2);
    conv_run *runs = ember_scratch(sizeof(conv_run) * (size_t)(n + panels));
    int64_t *first = ember_scratch(sizeof(int64_t) * (size_t)(panels + 1));
    uint8_t *eight = ember_scratch((size_t)panels);
    int failed = !runs || !first || !eight;
    if (!failed) {
        conv_panel_runs(n, L, ow, g->s * g->rstep, cg * plane, runs, first, eight);
        for (int64_t j = 0; j < b; j++)
            for (int64_t cl = 0; cl < cg; cl++)
                FN(split_plane)(x + (n0 + j) * xs[0] + (c0 + cl) * xs[1], xs[3], h, w, g,
                                planes + (j * cg + cl) * plane);
        const FN(packer) pk = {planes, plane, K, tap, runs, first, eight};
        failed = FN(ember_packed_product)(og, n, cg * K, wg, cg * K, FN(pack_columns), &pk,
                                          res, ldc);
    }
    ember_scratch_free(runs);
    ember_scratch_free(first);
    ember_scratch_free(eight);
    return failed;
}

/* --- forward: out (n, O, L) = w (O, C/g K) times the columns, group by group ---------- */

typedef struct {
    const scalar_t *x, *w, *b; /* b: the bias, or NULL */
    scalar_t *out;
    const int64_t *p;
    atomic_int *failed; /* set by a task whose scratch could not be had */
} FN(conv_args);

/* out's channels o0 .. o0+og of samples n0 .. n0+b = res (og, b L): each sample's L. */
static void FN(copy_out)(scalar_t *out, const scalar_t *res, int64_t n0, int64_t b, int64_t o,
                         int64_t o0, int64_t og, int64_t L) {
    for (int64_t j = 0; j < b; j++)
        for (int64_t r = 0; r < og; r++)
            memcpy(out + ((n0 + j) * o + o0 + r) * L, res + r * b * L + j * L,
                   (size_t)L * sizeof(scalar_t));
}

static void FN(forward_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(conv_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], g = p[G_GROUPS], n = p[G_N], chunk = p[G_CHUNK];
    const int64_t K = p[G_K] * p[G_K + 1] * p[G_K + 2];
    const int64_t L = p[G_OUT] * p[G_OUT + 1] * p[G_OUT + 2];
    const int64_t cg = c / g, og = o / g, rows = cg * K;
    const int direct = FN(direct_columns)(p);
    conv_split sp;
    const int packed = !direct && p[G_PACKED] && p[G_XS + 4] == 1 && conv_split_plan(p, &sp);
    const int64_t plane = packed ? sp.rows * sp.rstep : 0;
    scalar_t *cols = direct   ? NULL
                     : packed ? conv_scratch(chunk * cg * plane, sizeof(scalar_t))
                              : conv_scratch(rows * chunk * L, sizeof(scalar_t));
    scalar_t *res = chunk > 1 ? conv_scratch(og * chunk * L, sizeof(scalar_t)) : NULL;
    if ((!direct && !cols) || (chunk > 1 && !res)) {
        atomic_store(a->failed, 1);
        goto done;
    }
    if (packed) /* (the planes' margins: zero once, never written after) */
        memset(cols, 0, (size_t)(chunk * cg * plane) * sizeof(scalar_t));
    for (int64_t ch = lo; ch < hi; ch++) {
        const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0);
        for (int64_t gi = 0; gi < g; gi++) {
            const scalar_t *src;
            int64_t ldb = b * L;
            if (packed) {
                scalar_t *dst = b == 1 ? a->out + (n0 * o + gi * og) * L : res;
                if (FN(packed_forward)(a->x, p, &sp, n0, b, gi * cg, cg, og,
                                       a->w + gi * og * rows, cols, dst, b * L)) {
                    atomic_store(a->failed, 1);
                    goto done;
                }
                if (b > 1)
                    FN(copy_out)(a->out, res, n0, b, o, gi * og, og, L);
                continue;
            }
            if (direct) {
                src = a->x + n0 * p[G_XS] + gi * cg * p[G_XS + 1];
            } else {
                FN(im2col)(a->x, p, n0, b, gi * cg, cg, cols);
                src = cols;
            }
            const scalar_t *wg = a->w + gi * og * rows;
            if (b == 1) {
                GEMM(0, 0, og, L, rows, 1, wg, rows, src, ldb, 0,
                     a->out + (n0 * o + gi * og) * L, L);
                continue;
            }
            GEMM(0, 0, og, b * L, rows, 1, wg, rows, src, ldb, 0, res, b * L);
            FN(copy_out)(a->out, res, n0, b, o, gi * og, og, L);
        }
        if (a->b) FN(add_bias)(a->out + n0 * o * L, a->b, b, o, L); /* (while in cache) */
    }
done:
    ember_scratch_free(cols);
    ember_scratch_free(res);
}

int FN(conv_forward)(const scalar_t *x, const scalar_t *w, const scalar_t *b, scalar_t *out,
                     const int64_t *p) {
    atomic_int failed = 0;
    FN(conv_args) a = {x, w, b, out, p, &failed};
    const int64_t chunks = (p[G_N] + p[G_CHUNK] - 1) / p[G_CHUNK];
    ember_parallel_for(FN(forward_task), &a, chunks, 1);
    return atomic_load(&failed);
}

/* --- input gradient: dx = col2im(w^T gy), group by group ------------------------------ */

typedef struct {
    const scalar_t *gy, *w;
    scalar_t *dx;
    const int64_t *p;
    atomic_int *failed; /* set by a task whose scratch could not be had */
} FN(input_grad_args);

/* (og, b L) rows of gy for samples n0.. and output channels o0..: gy's own rows when b is
 * 1, else copied side by side into `buf`. */
static const scalar_t *FN(gy_rows)(const scalar_t *gy, int64_t o, int64_t L, int64_t n0,
                                   int64_t b, int64_t o0, int64_t og, scalar_t *buf) {
    if (b == 1) return gy + (n0 * o + o0) * L;
    for (int64_t r = 0; r < og; r++)
        for (int64_t j = 0; j < b; j++)
            memcpy(buf + r * b * L + j * L, gy + ((n0 + j) * o + o0 + r) * L,
                   (size_t)L * sizeof(scalar_t));
    return buf;
}

static void FN(input_grad_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(input_grad_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], g = p[G_GROUPS], n = p[G_N], chunk = p[G_CHUNK];
    const int64_t K = p[G_K] * p[G_K + 1] * p[G_K + 2];
    const int64_t L = p[G_OUT] * p[G_OUT + 1] * p[G_OUT + 2];
    const int64_t plane = p[G_IN] * p[G_IN + 1] * p[G_IN + 2];
    const int64_t cg = c / g, og = o / g, rows = cg * K;
    /* 1x1, stride 1, no padding: the product's rows are dx's own (no col2im) */
    int64_t q[G_LEN];
    memcpy(q, p, sizeof q);
    q[G_XS + 4] = 1, q[G_XS + 3] = p[G_IN + 2], q[G_XS + 2] = p[G_IN + 1] * p[G_IN + 2];
    q[G_XS + 1] = plane;
    const int direct = FN(direct_columns)(q);
    scalar_t *cols = direct ? NULL : conv_scratch(rows * chunk * L, sizeof(scalar_t));
    scalar_t *gbuf = chunk > 1 ? conv_scratch(og * chunk * L, sizeof(scalar_t)) : NULL;
    if ((!direct && !cols) || (chunk > 1 && !gbuf)) {
        atomic_store(a->failed, 1);
        goto done;
    }
    for (int64_t ch = lo; ch < hi; ch++) {
        const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0);
        for (int64_t gi = 0; gi < g; gi++) {
            const scalar_t *src = FN(gy_rows)(a->gy, o, L, n0, b, gi * og, og, gbuf);
            const scalar_t *wg = a->w + gi * og * rows;
            if (direct) {
                GEMM(1, 0, rows, L, og, 1, wg, rows, src, L, 0,
                     a->dx + (n0 * c + gi * cg) * plane, L);
                continue;
            }
            GEMM(1, 0, rows, b * L, og, 1, wg, rows, src, b * L, 0, cols, b * L);
            FN(col2im)(cols, p, n0, b, gi * cg, cg, a->dx);
        }
    }
done:
    ember_scratch_free(cols);
    ember_scratch_free(gbuf);
}

int FN(conv_input_grad)(const scalar_t *gy, const scalar_t *w, scalar_t *dx,
                         const int64_t *p) {
    atomic_int failed = 0;
    FN(input_grad_args) a = {gy, w, dx, p, &failed};
    const int64_t chunks = (p[G_N] + p[G_CHUNK] - 1) / p[G_CHUNK];
    ember_parallel_for(FN(input_grad_task), &a, chunks, 1);
    return atomic_load(&failed);
}

/* --- weight gradient: dw = sum over the batch of gy times the columns^T ----------------
 *
 * Where the columns have many rows per output channel (C/g K >= TRANSPOSED_ROWS O/g) it is
 * computed transposed, dw^T (C/g K, O/g) = the columns times gy^T: BLAS packs a product's
 * operands, and the columns (then the large operand) pack faster read along their rows
 * than across them (measured, one thread: 32 -> 64 3x3 stride 2 at 32x32, 16 products of
 * 64 x 288 by 512 columns, 2.4 ms against 3.2; MNIST's 32 -> 64 at 26x26 weight grad
 * 14.7 -> 9.7 ms). gy^T is gy's rows read transposed by BLAS's packing (a copy of them
 * transposed first cost more: the 64 -> 128 3x3 stride 2 at 16x16, batch 32, one thread
 * on an Intel Xeon, 5.4-5.8 ms against 4.2-5.1); ember's own product (gemm.c) reads it
 * from such a copy. With few rows (a 3-channel stem, 1x1
 * kernels) the plain product is the faster (stem 0.8 ms against 1.6). A function of the
 * shape alone, as the chunks and parts are. */
#define TRANSPOSED_ROWS 4

typedef struct {
    const scalar_t *x, *gy;
    scalar_t *acc; /* parts x groups x (O/g, C/g K), or (C/g K, O/g) transposed */
    const int64_t *p;
    atomic_int *failed; /* set by a task whose scratch could not be had */
} FN(weight_grad_args);

static int FN(weight_grad_transposed)(const int64_t *p) {
    const int64_t g = p[G_GROUPS];
    return (p[G_C] / g) * p[G_K] * p[G_K + 1] * p[G_K + 2] >= TRANSPOSED_ROWS * (p[G_O] / g);
}

static void FN(weight_grad_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(weight_grad_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], g = p[G_GROUPS], n = p[G_N], chunk = p[G_CHUNK];
    const int64_t K = p[G_K] * p[G_K + 1] * p[G_K + 2];
    const int64_t L = p[G_OUT] * p[G_OUT + 1] * p[G_OUT + 2];
    const int64_t cg = c / g, og = o / g, rows = cg * K, parts = p[G_PARTS];
    const int64_t chunks = (n + chunk - 1) / chunk;
    const int direct = FN(direct_columns)(p), transposed = FN(weight_grad_transposed)(p);
    scalar_t *cols = direct ? NULL : conv_scratch(rows * chunk * L, sizeof(scalar_t));
    /* (gy^T: read transposed by BLAS's packing; ember's own product packs by plain loads,
     * so for it gy's chunk is copied transposed first, as measured on the AMD EPYC) */
    const int copy_t = transposed && p[G_OWN], gcopy = copy_t || chunk > 1;
    scalar_t *gbuf = gcopy ? conv_scratch(og * chunk * L, sizeof(scalar_t)) : NULL;
    if ((!direct && !cols) || (gcopy && !gbuf)) {
        atomic_store(a->failed, 1);
        goto done;
    }
    for (int64_t part = lo; part < hi; part++) {
        scalar_t *acc = a->acc + part * o * rows;
        const int64_t first = chunks * part / parts, last = chunks * (part + 1) / parts;
        for (int64_t ch = first; ch < last; ch++) {
            const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0);
            for (int64_t gi = 0; gi < g; gi++) {
                const scalar_t *src;
                if (direct) {
                    src = a->x + n0 * p[G_XS] + gi * cg * p[G_XS + 1];
                } else {
                    FN(im2col)(a->x, p, n0, b, gi * cg, cg, cols);
                    src = cols;
                }
                const scalar_t beta = ch == first ? 0 : 1;
                scalar_t *dst = acc + gi * og * rows;
                if (copy_t) {
                    for (int64_t j = 0; j < b; j++) /* gy^T (b L, og) */
                        FN(transpose)(a->gy + ((n0 + j) * o + gi * og) * L, L, 1,
                                      gbuf + j * L * og, og, og, L);
                    GEMM(0, 0, rows, og, b * L, 1, src, b * L, gbuf, og, beta, dst, og);
                    continue;
                }
                const scalar_t *gr = FN(gy_rows)(a->gy, o, L, n0, b, gi * og, og, gbuf);
                if (transposed)
                    GEMM(0, 1, rows, og, b * L, 1, src, b * L, gr, b * L, beta, dst, og);
                else
                    GEMM(0, 1, og, rows, b * L, 1, gr, b * L, src, b * L, beta, dst, rows);
            }
        }
        if (first == last) memset(acc, 0, (size_t)(o * rows) * sizeof(scalar_t));
    }
done:
    ember_scratch_free(cols);
    ember_scratch_free(gbuf);
}

/* acc holds `parts` partial gradients (each transposed group by group, or not); dw = their
 * sum, added in order. */
int FN(conv_weight_grad)(const scalar_t *x, const scalar_t *gy, scalar_t *dw, scalar_t *acc,
                          const int64_t *p) {
    const int64_t parts = p[G_PARTS], g = p[G_GROUPS], og = p[G_O] / g;
    const int64_t rows = (p[G_C] / g) * p[G_K] * p[G_K + 1] * p[G_K + 2];
    const int64_t size = p[G_O] * rows;
    atomic_int failed = 0;
    FN(weight_grad_args) a = {x, gy, acc, p, &failed};
    ember_parallel_for(FN(weight_grad_task), &a, parts, 1);
    if (atomic_load(&failed)) return 1;
    for (int64_t part = 1; part < parts; part++) {
        scalar_t *restrict dst = acc;
        const scalar_t *restrict src = acc + part * size;
        for (int64_t i = 0; i < size; i++) dst[i] += src[i];
    }
    if (!FN(weight_grad_transposed)(p)) {
        memcpy(dw, acc, (size_t)size * sizeof(scalar_t));
        return 0;
    }
    for (int64_t gi = 0; gi < g; gi++) /* (rows, og) -> (og, rows) */
        FN(transpose)(acc + gi * og * rows, og, 1, dw + gi * og * rows, rows, rows, og);
    return 0;
}

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


/* --- Winograd F(2x2, 3x3): 3x3 stride-1 undilated ungrouped 2-d convolutions -----------
 *
 * Each 2x2 block of outputs comes from the 4x4 input tile under it: V = B^T d B per tile
 * and channel, U = G g G^T per kernel, and for each of the 16 positions of the 4x4
 * transform one product M = U (O x C) V (C x tiles) through BLAS, then Y = A^T M A. The
 * transforms are only additions (2.25x fewer multiplications than im2col), done in the
 * NumPy kernel's order (ops/_winograd.py): rows, then columns. A 2-d convolution here is
 * the 3-d one of conv_geo with its first spatial dim 1. The weight gradient is the
 * adjoint: dU = (A gy A^T) V^T per position, summed over tiles, and dw = G^T dU G. */

#ifndef EMBER_WINO_ONCE
#define EMBER_WINO_ONCE
static const double wino_g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
#endif

/* The transforms' one-dimensional steps over n independent lanes (restrict parameters, so
 * that the compiler vectorises them once inlined): B^T of four rows, A^T of four, A of
 * two. */
static inline void FN(wino_bt)(const scalar_t *restrict d0, const scalar_t *restrict d1,
                               const scalar_t *restrict d2, const scalar_t *restrict d3,
                               scalar_t *restrict o0, scalar_t *restrict o1,
                               scalar_t *restrict o2, scalar_t *restrict o3, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        o0[k] = d0[k] - d2[k];
        o1[k] = d1[k] + d2[k];
        o2[k] = d2[k] - d1[k];
        o3[k] = d1[k] - d3[k];
    }
}

static inline void FN(wino_at)(const scalar_t *restrict m0, const scalar_t *restrict m1,
                               const scalar_t *restrict m2, const scalar_t *restrict m3,
                               scalar_t *restrict y0, scalar_t *restrict y1, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        scalar_t a = m0[k] + m1[k], b = m1[k] - m2[k];
        y0[k] = a + m2[k];
        y1[k] = b - m3[k];
    }
}

static inline void FN(wino_a)(const scalar_t *restrict z0, const scalar_t *restrict z1,
                              scalar_t *restrict e0, scalar_t *restrict e1,
                              scalar_t *restrict e2, scalar_t *restrict e3, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        e0[k] = z0[k];
        e1[k] = z0[k] + z1[k];
        e2[k] = z0[k] - z1[k];
        e3[k] = -z1[k];
    }
}

/* Even and odd elements of one input row, with the padding's zeros: e[k] = row[2k - lo],
 * o[k] = row[2k + 1 - lo], k < n (NULL line: a row of padding). */
static void FN(wino_split)(const scalar_t *line, int64_t step, int64_t w, int64_t lo,
                           int64_t n, scalar_t *restrict e, scalar_t *restrict o) {
    for (int64_t k = 0; k < n; k++) e[k] = 0, o[k] = 0;
    if (line == NULL) return;
    if (step == 1) { /* adjacent elements: pairs (line[2m], line[2m + 1]) in one loop */
        const int64_t h = lo / 2, odd = lo & 1;
        /* the pair's first goes to e (lo even) or o (odd), at m + h; its second to o at
         * m + h, or e at m + h + 1 */
        scalar_t *restrict a = (odd ? o : e) + h, *restrict b = (odd ? e + 1 : o) + h;
        const int64_t ma = EMBER_MIN((w + 1) / 2, n - h), mb = EMBER_MIN(w / 2, n - h - odd);
        const int64_t both = EMBER_MAX(0, EMBER_MIN(ma, mb));
        for (int64_t m = 0; m < both; m++) a[m] = line[2 * m], b[m] = line[2 * m + 1];
        for (int64_t m = both; m < ma; m++) a[m] = line[2 * m];
        for (int64_t m = both; m < mb; m++) b[m] = line[2 * m + 1];
        return;
    }
    for (int par = 0; par < 2; par++) {
        scalar_t *restrict dst = par ? o : e;
        /* 0 <= 2k + par - lo < w */
        int64_t k0 = lo - par > 0 ? (lo - par + 1) / 2 : 0;
        int64_t k1 = (w + lo - par + 1) / 2;
        if (k1 > n) k1 = n;
        const scalar_t *src = line + (2 * k0 + par - lo) * step;
        for (int64_t k = k0; k < k1; k++) dst[k] = src[(k - k0) * 2 * step];
    }
}

/* V (16, C, P) for samples n0 .. n0+b at tile offset 0 (P = b th tw): B^T d B of every
 * tile, a tile row at a time: its four input rows split into even and odd columns (so
 * every step below runs over whole rows of tiles), the rows' transform, then the
 * columns'. `rowbuf` holds 16 (tw + 1). */
static void FN(wino_input)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b,
                           scalar_t *v, scalar_t *rowbuf) {
    const int64_t c = p[G_C], h = p[G_IN + 1], w = p[G_IN + 2], *xs = p + G_XS;
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2];
    const int64_t th = (oh + 1) / 2, tw = (ow + 1) / 2, P = b * th * tw, half = tw + 1;
    const int64_t plo = p[G_PAD + 1], qlo = p[G_PAD + 2];
    scalar_t *re[4], *ro[4], *te[4], *to[4];
    for (int i = 0; i < 4; i++) {
        re[i] = rowbuf + i * half, ro[i] = rowbuf + (4 + i) * half;
        te[i] = rowbuf + (8 + i) * half, to[i] = rowbuf + (12 + i) * half;
    }
    for (int64_t j = 0; j < b; j++)
        for (int64_t ci = 0; ci < c; ci++) {
            const scalar_t *src = x + (n0 + j) * xs[0] + ci * xs[1];
            for (int64_t ty = 0; ty < th; ty++) {
                for (int i = 0; i < 4; i++) {
                    const int64_t iy = 2 * ty + i - plo;
                    FN(wino_split)(iy < 0 || iy >= h ? NULL : src + iy * xs[3], xs[4], w, qlo,
                                   half, re[i], ro[i]);
                }
                FN(wino_bt)(re[0], re[1], re[2], re[3], te[0], te[1], te[2], te[3], half);
                FN(wino_bt)(ro[0], ro[1], ro[2], ro[3], to[0], to[1], to[2], to[3], half);
                const int64_t at = (j * th + ty) * tw;
                for (int i = 0; i < 4; i++) /* a tile's columns: e[tx], o[tx], e[tx+1], o[tx+1] */
                    FN(wino_bt)(te[i], to[i], te[i] + 1, to[i] + 1,
                                v + ((4 * i + 0) * c + ci) * P + at,
                                v + ((4 * i + 1) * c + ci) * P + at,
                                v + ((4 * i + 2) * c + ci) * P + at,
                                v + ((4 * i + 3) * c + ci) * P + at, tw);
            }
        }
}

/* U (16, O, C) = G g G^T of every kernel, in double (G g, then times G^T), rounded once.
 * WINO_LANES kernels at a time, each step over the lanes (so that it vectorises); every
 * element's own arithmetic is the same whatever the grouping. Blocks of WINO_LANES kernels
 * are shared out to the kernel threads, 1024 kernels a task at least (measured, 128 -> 128
 * channels: 0.15 ms on one thread, 0.08 on two).
 * `wino_kernel_flipped` is the same transform of the input gradient's kernel, w's in and
 * out channels swapped and its taps reversed (`_flipped` in ops/_conv_kernels.py), read
 * from w (O, C, 3, 3) as it is: U (16, C, O), without the flipped copy. */
#ifndef WINO_LANES
#define WINO_LANES 64
#endif
typedef struct {
    const scalar_t *w;
    scalar_t *u;
    int64_t n, o; /* kernels; w's out channels (flipped: the product's in channels) */
    int flipped;
} FN(wino_kernel_args);

static void FN(wino_kernel_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_kernel_args) *a = ctx;
    const int64_t n = a->n, o = a->o, c = n / (o > 0 ? o : 1);
    const scalar_t *w = a->w;
    double g[9][WINO_LANES], t[4][3][WINO_LANES];
    for (int64_t blk = lo; blk < hi; blk++) {
        const int64_t s = blk * WINO_LANES, m = EMBER_MIN(WINO_LANES, n - s);
        if (!a->flipped) {
            for (int64_t q = 0; q < m; q++)
                for (int tap = 0; tap < 9; tap++) g[tap][q] = w[(s + q) * 9 + tap];
        } else { /* kernel s + q is (ci, oi) = divmod(s + q, o): w[oi, ci] reversed */
            for (int64_t q = 0; q < m; q++) {
                const int64_t ci = (s + q) / o, oi = (s + q) % o;
                const scalar_t *k = w + (oi * c + ci) * 9;
                for (int tap = 0; tap < 9; tap++) g[tap][q] = k[8 - tap];
            }
        }
        for (int i = 0; i < 4; i++)
            for (int bb = 0; bb < 3; bb++)
                for (int64_t q = 0; q < m; q++)
                    t[i][bb][q] = wino_g[i][0] * g[bb][q] + wino_g[i][1] * g[3 + bb][q] +
                                  wino_g[i][2] * g[6 + bb][q];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                scalar_t *restrict dst = a->u + (4 * i + j) * n + s;
                for (int64_t q = 0; q < m; q++)
                    dst[q] = (scalar_t)(t[i][0][q] * wino_g[j][0] + t[i][1][q] * wino_g[j][1] +
                                        t[i][2][q] * wino_g[j][2]);
            }
    }
}

void FN(wino_kernel)(const scalar_t *w, scalar_t *u, int64_t o, int64_t c) {
    FN(wino_kernel_args) a = {w, u, o * c, o, 0};
    ember_parallel_for(FN(wino_kernel_task), &a, (o * c + WINO_LANES - 1) / WINO_LANES, 16);
}

void FN(wino_kernel_flipped)(const scalar_t *w, scalar_t *u, int64_t o, int64_t c) {
    FN(wino_kernel_args) a = {w, u, o * c, o, 1};
    ember_parallel_for(FN(wino_kernel_task), &a, (o * c + WINO_LANES - 1) / WINO_LANES, 16);
}

typedef struct {
    const scalar_t *x, *u, *b; /* b: the bias, or NULL */
    scalar_t *out;
    const int64_t *p;
    atomic_int *failed; /* bit 1: a task had no scratch; bit 2: a result is not finite */
} FN(wino_args);

/* Whether a[0 .. n) are all finite: their products with zero sum to zero (NaN where one
 * is inf or NaN; no overflow to mistake), summed in 16 independent lanes so that the
 * compiler vectorises the pass. */
static int FN(all_finite)(const scalar_t *restrict a, int64_t n) {
    scalar_t z[16] = {0}, t = 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++) z[l] += a[i + l] * 0;
    for (; i < n; i++) t += a[i] * 0;
    for (int l = 0; l < 16; l++) t += z[l];
    return t == 0;
}

static void FN(wino_forward_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t most = chunk * th * tw;
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *m = conv_scratch(16 * o * most, sizeof(scalar_t));
    scalar_t *rowbuf = conv_scratch(24 * (tw + 1), sizeof(scalar_t));
    if (!v || !m || !rowbuf) {
        atomic_fetch_or(a->failed, 1);
        goto done;
    }
    for (int64_t ch = lo; ch < hi; ch++) {
        const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
        FN(wino_input)(a->x, p, n0, b, v, rowbuf);
        for (int k = 0; k < 16; k++)
            GEMM(0, 0, o, P, c, 1, a->u + k * o * c, c, v + k * c * P, P, 0, m + k * o * P, P);
        for (int64_t j = 0; j < b; j++)
            for (int64_t oi = 0; oi < o; oi++) {
                scalar_t *dst = a->out + ((n0 + j) * o + oi) * oh * ow;
                for (int64_t ty = 0; ty < th; ty++) {
                    const int64_t at = oi * P + (j * th + ty) * tw;
                    scalar_t *s0 = rowbuf, *s1 = rowbuf + 4 * tw, *y = rowbuf + 8 * tw;
                    for (int jj = 0; jj < 4; jj++) /* A^T m along the rows */
                        FN(wino_at)(m + jj * o * P + at, m + (4 + jj) * o * P + at,
                                    m + (8 + jj) * o * P + at, m + (12 + jj) * o * P + at,
                                    s0 + jj * tw, s1 + jj * tw, tw);
                    for (int i = 0; i < 2; i++) { /* and along the columns */
                        const scalar_t *q = i ? s1 : s0;
                        scalar_t *y0 = y + 2 * i * tw, *y1 = y0 + tw;
                        FN(wino_at)(q, q + tw, q + 2 * tw, q + 3 * tw, y0, y1, tw);
                        if (2 * ty + i >= oh) break;
                        scalar_t *row = dst + (2 * ty + i) * ow;
                        for (int64_t tx = 0; tx < ow / 2; tx++)
                            row[2 * tx] = y0[tx], row[2 * tx + 1] = y1[tx];
                        if (ow & 1) row[ow - 1] = y0[tw - 1];
                    }
                }
            }
        if (!FN(all_finite)(a->out + n0 * o * oh * ow, b * o * oh * ow))
            atomic_fetch_or(a->failed, 2);
        else if (a->b)
            FN(add_bias)(a->out + n0 * o * oh * ow, a->b, b, o, oh * ow);
    }
done:
    ember_scratch_free(v);
    ember_scratch_free(m);
    ember_scratch_free(rowbuf);
}

int FN(wino_forward)(const scalar_t *x, const scalar_t *u, const scalar_t *b, scalar_t *out,
                     const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_args) a = {x, u, b, out, p, &failed};
    const int64_t chunks = (p[G_N] + p[G_CHUNK] - 1) / p[G_CHUNK];
    ember_parallel_for(FN(wino_forward_task), &a, chunks, 1);
    return atomic_load(&failed);
}

typedef struct {
    const scalar_t *x, *gy;
    scalar_t *acc; /* parts x (16, O, C) */
    const int64_t *p;
    atomic_int *failed; /* set by a task whose scratch could not be had */
} FN(wino_wgrad_args);

static void FN(wino_weight_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_wgrad_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK], parts = p[G_PARTS];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t most = chunk * th * tw, chunks = (n + chunk - 1) / chunk;
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *d = conv_scratch(16 * o * most, sizeof(scalar_t));
    scalar_t *rowbuf = conv_scratch(24 * (tw + 1), sizeof(scalar_t));
    if (!v || !d || !rowbuf) {
        atomic_store(a->failed, 1);
        goto done;
    }
    for (int64_t part = lo; part < hi; part++) {
        scalar_t *acc = a->acc + part * 16 * o * c;
        const int64_t first = chunks * part / parts, last = chunks * (part + 1) / parts;
        for (int64_t ch = first; ch < last; ch++) {
            const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
            FN(wino_input)(a->x, p, n0, b, v, rowbuf);
            /* D = A z A^T of each 2x2 block z of gy (zeros past its end) */
            for (int64_t j = 0; j < b; j++)
                for (int64_t oi = 0; oi < o; oi++) {
                    const scalar_t *g = a->gy + ((n0 + j) * o + oi) * oh * ow;
                    for (int64_t ty = 0; ty < th; ty++) {
                        const int64_t at = oi * P + (j * th + ty) * tw;
                        scalar_t *z = rowbuf, *e = rowbuf + 4 * tw; /* z: 00, 01, 10, 11 */
                        for (int r = 0; r < 2; r++) {
                            scalar_t *restrict ze = z + 2 * r * tw, *restrict zo = ze + tw;
                            const scalar_t *row = g + (2 * ty + r) * ow;
                            for (int64_t tx = 0; tx < tw; tx++) ze[tx] = 0, zo[tx] = 0;
                            if (2 * ty + r >= oh) continue;
                            for (int64_t tx = 0; tx < ow / 2; tx++)
                                ze[tx] = row[2 * tx], zo[tx] = row[2 * tx + 1];
                            if (ow & 1) ze[tw - 1] = row[ow - 1];
                        }
                        for (int col = 0; col < 2; col++) { /* A z along the rows */
                            scalar_t *e0 = e + col * tw;
                            FN(wino_a)(z + col * tw, z + (2 + col) * tw, e0, e0 + 2 * tw,
                                       e0 + 4 * tw, e0 + 6 * tw, tw);
                        }
                        for (int i = 0; i < 4; i++) /* and along the columns */
                            FN(wino_a)(e + 2 * i * tw, e + (2 * i + 1) * tw,
                                       d + (4 * i) * o * P + at, d + (4 * i + 1) * o * P + at,
                                       d + (4 * i + 2) * o * P + at,
                                       d + (4 * i + 3) * o * P + at, tw);
                    }
                }
            for (int k = 0; k < 16; k++)
                GEMM(0, 1, o, c, P, 1, d + k * o * P, P, v + k * c * P, P, ch == first ? 0 : 1,
                     acc + k * o * c, c);
        }
        if (first == last) memset(acc, 0, (size_t)(16 * o * c) * sizeof(scalar_t));
    }
done:
    ember_scratch_free(v);
    ember_scratch_free(d);
    ember_scratch_free(rowbuf);
}

typedef struct {
    scalar_t *acc, *dw;
    const int64_t *p;
} FN(wino_finish_args);

/* Kernels [lo, hi) WINO_LANES at a time of wino_weight_finish: their partial sums added in
 * order into part 0, then G^T dU G. */
static void FN(wino_finish_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_finish_args) *f = ctx;
    const int64_t *p = f->p;
    const int64_t o = p[G_O], c = p[G_C], parts = p[G_PARTS], n = o * c, size = 16 * n;
    scalar_t *acc = f->acc, *dw = f->dw;
    double t[4][3][WINO_LANES], r[9][WINO_LANES];
    for (int64_t s = lo * WINO_LANES; s < EMBER_MIN(n, hi * WINO_LANES); s += WINO_LANES) {
        const int64_t m = EMBER_MIN(WINO_LANES, n - s);
        for (int64_t part = 1; part < parts; part++)
            for (int k = 0; k < 16; k++) {
                scalar_t *restrict dst = acc + k * n + s;
                const scalar_t *restrict src = acc + part * size + k * n + s;
                for (int64_t q = 0; q < m; q++) dst[q] += src[q];
            }
        for (int i = 0; i < 4; i++) {
            const scalar_t *a0 = acc + (4 * i) * n + s, *a1 = a0 + n, *a2 = a1 + n,
                           *a3 = a2 + n;
            for (int ib = 0; ib < 3; ib++)
                for (int64_t q = 0; q < m; q++)
                    t[i][ib][q] = (double)a0[q] * wino_g[0][ib] + (double)a1[q] * wino_g[1][ib] +
                                  (double)a2[q] * wino_g[2][ib] + (double)a3[q] * wino_g[3][ib];
        }
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++)
                for (int64_t q = 0; q < m; q++)
                    r[ia * 3 + ib][q] = wino_g[0][ia] * t[0][ib][q] + wino_g[1][ia] * t[1][ib][q] +
                                        wino_g[2][ia] * t[2][ib][q] + wino_g[3][ia] * t[3][ib][q];
        for (int64_t q = 0; q < m; q++)
            for (int tap = 0; tap < 9; tap++) dw[(s + q) * 9 + tap] = (scalar_t)r[tap][q];
    }
}

/* dw (O, C, 3, 3) = G^T dU G, dU the sum in order of the `parts` partial sums (acc);
 * WINO_LANES kernels at a time, as `wino_kernel`, shared out to the pool (each kernel's
 * arithmetic is the same on any thread). */
void FN(wino_weight_finish)(scalar_t *acc, scalar_t *dw, const int64_t *p) {
    FN(wino_finish_args) f = {acc, dw, p};
    const int64_t blocks = (p[G_O] * p[G_C] + WINO_LANES - 1) / WINO_LANES;
    ember_parallel_for(FN(wino_finish_task), &f, blocks, 16);
}

int FN(wino_weight_grad)(const scalar_t *x, const scalar_t *gy, scalar_t *acc,
                          const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_wgrad_args) a = {x, gy, acc, p, &failed};
    ember_parallel_for(FN(wino_weight_task), &a, p[G_PARTS], 1);
    return atomic_load(&failed);
}

/* --- Winograd on narrow planes: the same transforms, channels last ---------------------
 *
 * Where a row holds few tiles, a tile row is too short a loop; so the chunk is first copied
 * channels last (b, 2 th + 2, 2 tw + 2, C, the padding's zeros around), every transform
 * runs over a tile's channels (V and M are (16, P, C) and (16, P, O)), and the output and
 * the output gradient are transposed on the way out and in. */

/* xp (b, hp, wp, C) = samples n0.. of x padded, channels last; hp, wp = 2 th + 2, 2 tw + 2.
 * Writes the same positions for every chunk: the caller zeroes xp once, for the padding. */
static void FN(wino_last_pad)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b,
                              int64_t hp, int64_t wp, scalar_t *xp) {
    const int64_t c = p[G_C], h = p[G_IN + 1], w = p[G_IN + 2], *xs = p + G_XS;
    const int64_t plo = p[G_PAD + 1], qlo = p[G_PAD + 2];
    const int64_t y1 = EMBER_MIN(h, hp - plo), x1 = EMBER_MIN(w, wp - qlo);
    for (int64_t j = 0; j < b; j++)
        for (int64_t iy = 0; iy < y1; iy++) /* row iy: (C, x1) -> (x1, C) */
            FN(transpose)(x + (n0 + j) * xs[0] + iy * xs[3], xs[1], xs[4],
                          xp + ((j * hp + iy + plo) * wp + qlo) * c, c, c, x1);
}

/* V (16, P, C): B^T d B of every tile of xp, over the channels. */
static void FN(wino_last_input)(const scalar_t *xp, int64_t b, int64_t th, int64_t tw,
                                int64_t hp, int64_t wp, int64_t c, scalar_t *v,
                                scalar_t *t) {
    const int64_t P = b * th * tw;
    for (int64_t j = 0; j < b; j++)
        for (int64_t ty = 0; ty < th; ty++)
            for (int64_t tx = 0; tx < tw; tx++) {
                const int64_t pp = (j * th + ty) * tw + tx;
                const scalar_t *base = xp + ((j * hp + 2 * ty) * wp + 2 * tx) * c;
                for (int s = 0; s < 4; s++) { /* B^T along the rows, column s */
                    const scalar_t *d0 = base + s * c;
                    FN(wino_bt)(d0, d0 + wp * c, d0 + 2 * wp * c, d0 + 3 * wp * c, t + s * c,
                                t + (4 + s) * c, t + (8 + s) * c, t + (12 + s) * c, c);
                }
                for (int i = 0; i < 4; i++) { /* and along the columns */
                    const scalar_t *e0 = t + 4 * i * c;
                    scalar_t *v0 = v + ((4 * i) * P + pp) * c;
                    FN(wino_bt)(e0, e0 + c, e0 + 2 * c, e0 + 3 * c, v0, v0 + P * c,
                                v0 + 2 * P * c, v0 + 3 * P * c, c);
                }
            }
}

static void FN(wino_last_forward_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t hp = 2 * th + 2, wp = 2 * tw + 2, most = chunk * th * tw;
    scalar_t *xp = conv_scratch(chunk * hp * wp * c, sizeof(scalar_t));
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *m = conv_scratch(16 * o * most, sizeof(scalar_t));
    scalar_t *y = conv_scratch(chunk * oh * ow * o, sizeof(scalar_t));
    scalar_t *t = conv_scratch(17 * EMBER_MAX(c, o), sizeof(scalar_t));
    if (!xp || !v || !m || !y || !t) {
        atomic_fetch_or(a->failed, 1);
        goto done;
    }
    memset(xp, 0, (size_t)(chunk * hp * wp * c) * sizeof(scalar_t)); /* (the padding) */
    for (int64_t ch = lo; ch < hi; ch++) {
        const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
        FN(wino_last_pad)(a->x, p, n0, b, hp, wp, xp);
        FN(wino_last_input)(xp, b, th, tw, hp, wp, c, v, t);
        for (int k = 0; k < 16; k++)
            GEMM(0, 1, P, o, c, 1, v + k * P * c, c, a->u + k * o * c, c, 0, m + k * P * o, o);
        for (int64_t pp = 0; pp < P; pp++) {
            const int64_t j = pp / (th * tw), ty = pp / tw % th, tx = pp % tw;
            for (int jj = 0; jj < 4; jj++) { /* A^T m along the rows */
                const scalar_t *m0 = m + (jj * P + pp) * o;
                FN(wino_at)(m0, m0 + 4 * P * o, m0 + 8 * P * o, m0 + 12 * P * o, t + jj * o,
                            t + (4 + jj) * o, o);
            }
            for (int i = 0; i < 2 && 2 * ty + i < oh; i++) { /* and along the columns */
                const scalar_t *q0 = t + 4 * i * o;
                scalar_t *y0 = y + ((j * oh + 2 * ty + i) * ow + 2 * tx) * o;
                /* (a last odd column's second output lands in the row's spare slot) */
                FN(wino_at)(q0, q0 + o, q0 + 2 * o, q0 + 3 * o, y0,
                            2 * tx + 1 < ow ? y0 + o : t + 16 * EMBER_MAX(c, o), o);
            }
        }
        for (int64_t j = 0; j < b; j++) /* (b, oh ow, O) -> out (b, O, oh ow) */
            FN(transpose)(y + j * oh * ow * o, o, 1, a->out + (n0 + j) * o * oh * ow, oh * ow,
                          oh * ow, o);
        if (!FN(all_finite)(a->out + n0 * o * oh * ow, b * o * oh * ow))
            atomic_fetch_or(a->failed, 2);
        else if (a->b)
            FN(add_bias)(a->out + n0 * o * oh * ow, a->b, b, o, oh * ow);
    }
done:
    ember_scratch_free(xp);
    ember_scratch_free(v);
    ember_scratch_free(m);
    ember_scratch_free(y);
    ember_scratch_free(t);
}

int FN(wino_last_forward)(const scalar_t *x, const scalar_t *u, const scalar_t *b,
                          scalar_t *out, const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_args) a = {x, u, b, out, p, &failed};
    const int64_t chunks = (p[G_N] + p[G_CHUNK] - 1) / p[G_CHUNK];
    ember_parallel_for(FN(wino_last_forward_task), &a, chunks, 1);
    return atomic_load(&failed);
}

static void FN(wino_last_weight_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_wgrad_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK], parts = p[G_PARTS];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t hp = 2 * th + 2, wp = 2 * tw + 2, most = chunk * th * tw;
    const int64_t chunks = (n + chunk - 1) / chunk;
    scalar_t *xp = conv_scratch(chunk * hp * wp * c, sizeof(scalar_t));
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *d = conv_scratch(16 * o * most, sizeof(scalar_t));
    /* gy chunk channels last, one zero row and column past its end: (b, 2th, 2tw, O) */
    scalar_t *gl = conv_scratch(chunk * 4 * th * tw * o, sizeof(scalar_t));
    scalar_t *t = conv_scratch(16 * EMBER_MAX(c, o), sizeof(scalar_t));
    if (!xp || !v || !d || !gl || !t) {
        atomic_store(a->failed, 1);
        goto done;
    }
    /* the padding, and gl's row and column past gy's end: the same zeros for every chunk */
    memset(xp, 0, (size_t)(chunk * hp * wp * c) * sizeof(scalar_t));
    memset(gl, 0, (size_t)(chunk * 4 * th * tw * o) * sizeof(scalar_t));
    for (int64_t part = lo; part < hi; part++) {
        scalar_t *acc = a->acc + part * 16 * o * c;
        const int64_t first = chunks * part / parts, last = chunks * (part + 1) / parts;
        for (int64_t ch = first; ch < last; ch++) {
            const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
            FN(wino_last_pad)(a->x, p, n0, b, hp, wp, xp);
            FN(wino_last_input)(xp, b, th, tw, hp, wp, c, v, t);
            for (int64_t j = 0; j < b; j++)
                for (int64_t yy = 0; yy < oh; yy++) /* row yy: (O, ow) -> (ow, O) */
                    FN(transpose)(a->gy + (n0 + j) * o * oh * ow + yy * ow, oh * ow, 1,
                                  gl + ((j * 2 * th + yy) * 2 * tw) * o, o, o, ow);
            for (int64_t pp = 0; pp < P; pp++) {
                const int64_t j = pp / (th * tw), ty = pp / tw % th, tx = pp % tw;
                const scalar_t *z00 = gl + ((j * 2 * th + 2 * ty) * 2 * tw + 2 * tx) * o;
                const scalar_t *z01 = z00 + o, *z10 = z00 + 2 * tw * o, *z11 = z10 + o;
                for (int col = 0; col < 2; col++) /* A z along the rows */
                    FN(wino_a)(col ? z01 : z00, col ? z11 : z10, t + col * o, t + (2 + col) * o,
                               t + (4 + col) * o, t + (6 + col) * o, o);
                for (int i = 0; i < 4; i++) { /* and along the columns */
                    scalar_t *d0 = d + ((4 * i) * P + pp) * o;
                    FN(wino_a)(t + 2 * i * o, t + (2 * i + 1) * o, d0, d0 + P * o,
                               d0 + 2 * P * o, d0 + 3 * P * o, o);
                }
            }
            for (int k = 0; k < 16; k++)
                GEMM(1, 0, o, c, P, 1, d + k * P * o, o, v + k * P * c, c, ch == first ? 0 : 1,
                     acc + k * o * c, c);
        }
        if (first == last) memset(acc, 0, (size_t)(16 * o * c) * sizeof(scalar_t));
    }
done:
    ember_scratch_free(xp);
    ember_scratch_free(v);
    ember_scratch_free(d);
    ember_scratch_free(gl);
    ember_scratch_free(t);
}

int FN(wino_last_weight_grad)(const scalar_t *x, const scalar_t *gy, scalar_t *acc,
                               const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_wgrad_args) a = {x, gy, acc, p, &failed};
    ember_parallel_for(FN(wino_last_weight_task), &a, p[G_PARTS], 1);
    return atomic_load(&failed);
}

#undef GEMM
