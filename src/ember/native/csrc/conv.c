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
 *
 * One translation unit in four files: this one (geometry, row helpers, the im2col kernels'
 * forward and gradients), conv_columns.c (im2col / col2im, split planes, columns packed
 * straight into ember's own product), conv_depthwise.c and conv_winograd.c.
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

#include "conv_columns.c" /* (im2col / col2im, split planes, packed columns) */

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

/* --- F.unfold / F.fold: im2col and col2im themselves, a sample at a time ------------------
 * unfold's (N, C K, L) columns are each sample's im2col; fold is their adjoint, col2im: each
 * tap's columns added where it read, taps in order, onto zeros. x, cols and dx C-order. */
typedef struct {
    const scalar_t *in;
    scalar_t *out;
    const int64_t *p;
} FN(columns_args);

static int64_t FN(columns_size)(const int64_t *p) {
    return p[G_C] * p[G_K] * p[G_K + 1] * p[G_K + 2] * p[G_OUT] * p[G_OUT + 1] * p[G_OUT + 2];
}

static void FN(unfold_task)(void *v, int64_t lo, int64_t hi) {
    const FN(columns_args) *a = v;
    const int64_t size = FN(columns_size)(a->p);
    for (int64_t n = lo; n < hi; n++)
        FN(im2col)(a->in, a->p, n, 1, 0, a->p[G_C], a->out + n * size);
}

static void FN(fold_task)(void *v, int64_t lo, int64_t hi) {
    const FN(columns_args) *a = v;
    const int64_t size = FN(columns_size)(a->p);
    for (int64_t n = lo; n < hi; n++)
        FN(col2im)(a->in + n * size, a->p, n, 1, 0, a->p[G_C], a->out);
}

void FN(unfold_columns)(const scalar_t *x, const int64_t *p, scalar_t *cols) {
    FN(columns_args) a = {x, cols, p};
    ember_parallel_for(FN(unfold_task), &a, p[G_N], 1);
}

void FN(fold_columns)(const scalar_t *cols, const int64_t *p, scalar_t *dx) {
    FN(columns_args) a = {cols, dx, p};
    ember_parallel_for(FN(fold_task), &a, p[G_N], 1);
}

#include "conv_depthwise.c"
#include "conv_winograd.c"

#undef GEMM
