/* batch_norm.c: training-mode batch normalisation, forward and backward, one channel per
 * task. Written once against scalar_t and FN(name); kernels.py compiles it for float and
 * double.
 *
 * x is contiguous (n, c, len). Per channel, as PyTorch's CPU kernel computes it: the sum in
 * double (reduce.h's lanes, restarting at each plane), mean = (scalar_t)(sum / count); the
 * centred squares d * d with d = x - mean, each rounded to scalar_t, summed in double and
 * rounded (var_sum, which the running variance divides by count - 1), var = var_sum / count
 * in scalar_t, rstd = 1 / sqrt(var + eps) in double, rounded;
 * then alpha = rstd * weight and beta = fma(-mean, alpha, bias), and one pass writes
 * out = fma(x, alpha, beta) (PyTorch's fused multiply-adds) and xhat = (x - mean) * rstd
 * (for the derivative rules). Given the same sums, PyTorch's bits. The backward reads x and
 * the mean and reduces each plane as PyTorch's backward kernel does (bn_plane_sums).
 *
 * A task takes a block of adjacent channels and reads them sample by sample: each sample's
 * block is one contiguous run of BN_RUN elements or more, where a channel's plane alone
 * may be a few cache lines (8x8: 256 bytes, then a jump of c planes), which the hardware
 * prefetchers follow poorly. Each channel keeps its own lanes, so its sums are the same
 * as a channel at a time (measured, batch 32, 128 channels of 8x8, one thread, cold
 * caches: forward 0.92 -> 0.5 ms, backward 0.65 -> 0.35 ms).
 */
#include <math.h>

#include "ember.h"
#include "reduce.h"


/* acc[j % LANES] += d * d with d = x[j] - mean, difference and square rounded to scalar_t
 * (PyTorch's variance sum), the sum in double. */
static inline void FN(acc_sq_dev_rounded)(double *restrict acc, const scalar_t *restrict x,
                                          int64_t n, scalar_t mean) {
    int64_t j = 0;
    for (; j + EMBER_LANES <= n; j += EMBER_LANES)
        for (int k = 0; k < EMBER_LANES; k++) {
            const scalar_t d = x[j + k] - mean;
            acc[k] += (double)(d * d);
        }
    for (int k = 0; j + k < n; k++) {
        const scalar_t d = x[j + k] - mean;
        acc[k] += (double)(d * d);
    }
}

#define BN_RUN 1024   /* elements: a block's run per sample (4 KiB of float) at least */
#define BN_BLOCK 32   /* channels per block at most (their lanes live on the stack) */

/* Channels per task block for planes of `len` elements (and c channels in all). */
static inline int64_t bn_block(int64_t c, int64_t len) {
    int64_t b = len >= BN_RUN ? 1 : (BN_RUN + len - 1) / (len > 0 ? len : 1);
    b = EMBER_MIN(b, BN_BLOCK);
    return EMBER_MAX(EMBER_MIN(b, c), 1);
}

typedef struct {
    const scalar_t *x, *weight, *bias;
    scalar_t *out, *xhat, *mean, *var_sum, *rstd;
    int64_t n, c, len, block;
    double eps;
} FN(bn_forward_args);

static void FN(bn_forward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(bn_forward_args) *a = p;
    const int64_t n = a->n, c = a->c, len = a->len;
    const double count = (double)(n * len);
    for (int64_t b0 = lo * a->block; b0 < EMBER_MIN(hi * a->block, c); b0 += a->block) {
        const int64_t nb = EMBER_MIN(a->block, c - b0);
        double acc[BN_BLOCK][EMBER_LANES] = {{0}};
        scalar_t mean[BN_BLOCK], rstd[BN_BLOCK], scale[BN_BLOCK], shift[BN_BLOCK];
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < nb; k++)
                FN(acc_sum)(acc[k], a->x + (i * c + b0 + k) * len, len);
        for (int64_t k = 0; k < nb; k++) {
            mean[k] = (scalar_t)(ember_lanes_total(acc[k]) / count);
            for (int l = 0; l < EMBER_LANES; l++) acc[k][l] = 0;
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < nb; k++)
                FN(acc_sq_dev_rounded)(acc[k], a->x + (i * c + b0 + k) * len, len, mean[k]);
        for (int64_t k = 0; k < nb; k++) {
            const int64_t ch = b0 + k;
            const scalar_t var_sum = (scalar_t)ember_lanes_total(acc[k]);
            const scalar_t var = var_sum / (scalar_t)count;
            rstd[k] = (scalar_t)(1.0 / sqrt((double)var + a->eps));
            scale[k] = a->weight ? rstd[k] * a->weight[ch] : rstd[k];
            shift[k] = EMBER_FMA_T(-mean[k], scale[k], a->bias ? a->bias[ch] : (scalar_t)0);
            a->mean[ch] = mean[k];
            a->var_sum[ch] = var_sum;
            a->rstd[ch] = rstd[k];
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < nb; k++) {
                const int64_t at = (i * c + b0 + k) * len;
                const scalar_t *xs = a->x + at;
                scalar_t *o = a->out + at, *h = a->xhat + at;
                const scalar_t m = mean[k], sc = scale[k], sh = shift[k], r = rstd[k];
                for (int64_t j = 0; j < len; j++) {
                    o[j] = EMBER_FMA_T(xs[j], sc, sh);
                    h[j] = (xs[j] - m) * r;
                }
            }
    }
}

/* The blocks of channels, and how many a task takes at least (4096 elements' worth). */
static inline void bn_split(int64_t n, int64_t c, int64_t len, int64_t *block,
                            int64_t *blocks, int64_t *grain) {
    *block = bn_block(c, len);
    *blocks = (c + *block - 1) / *block;
    const int64_t per = n * len * *block; /* elements per block */
    *grain = per >= 4096 ? 1 : (4096 + per - 1) / EMBER_MAX(per, 1);
}

void FN(bn_forward)(const scalar_t *x, const scalar_t *weight, const scalar_t *bias,
                    scalar_t *out, scalar_t *xhat, scalar_t *mean, scalar_t *var_sum,
                    scalar_t *rstd, int64_t n, int64_t c, int64_t len, double eps) {
    int64_t block, blocks, grain;
    bn_split(n, c, len, &block, &blocks, &grain);
    FN(bn_forward_args) a = {x, weight, bias, out, xhat, mean, var_sum, rstd, n, c, len, block,
                             eps};
    ember_parallel_for(FN(bn_forward_task), &a, blocks, grain);
}

/* PyTorch's 256-bit vectors, in lanes of scalar_t: the backward's plane reductions. */
#define BN_W ((int)(32 / sizeof(scalar_t)))

/* (sum(dy), sum((x - mean) dy)) of one plane in the order of PyTorch's vector reduction:
 * lanes start from the first BN_W values, whole vectors add lane by lane (each product
 * rounded), a last partial vector's products fuse into their lanes, and the lanes fold in
 * halves; a plane shorter than BN_W adds in order (ops/_batch_norm_grad.py). */
static inline void FN(bn_plane_sums)(const scalar_t *restrict x, const scalar_t *restrict dy,
                                     int64_t len, scalar_t mean, double *sum, double *dot) {
    if (len < BN_W) {
        scalar_t s = dy[0], d = (x[0] - mean) * dy[0];
        for (int64_t j = 1; j < len; j++) {
            s += dy[j];
            d += (x[j] - mean) * dy[j];
        }
        *sum += s;
        *dot += d;
        return;
    }
    scalar_t s[BN_W], d[BN_W];
    for (int k = 0; k < BN_W; k++) {
        s[k] = dy[k];
        d[k] = (x[k] - mean) * dy[k];
    }
    const int64_t full = len - len % BN_W;
    for (int64_t j = BN_W; j < full; j += BN_W)
        for (int k = 0; k < BN_W; k++) {
            s[k] += dy[j + k];
            d[k] += (x[j + k] - mean) * dy[j + k];
        }
    for (int k = 0; full + k < len; k++) {
        s[k] += dy[full + k];
        d[k] = EMBER_FMA_T(x[full + k] - mean, dy[full + k], d[k]);
    }
    for (int w = BN_W / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) {
            s[k] += s[k + w];
            d[k] += d[k + w];
        }
    *sum += s[0];
    *dot += d[0];
}

/* Per channel: S = sum(dy), D = sum((x - mean) dy) plane by plane (in double across them);
 * dbias = S, dweight = D rstd (double); k = ((scalar_t)D rstd) rstd / count and
 * grad_mean = S / count rounded; dx = fma(-(x - mean), k, dy - grad_mean) rstd w. */
typedef struct {
    const scalar_t *g, *x, *mean, *rstd, *weight;
    scalar_t *dx, *dweight, *dbias;
    int64_t n, c, len, block;
} FN(bn_backward_args);

static void FN(bn_backward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(bn_backward_args) *a = p;
    const int64_t n = a->n, c = a->c, len = a->len;
    const int64_t count = n * len;
    for (int64_t b0 = lo * a->block; b0 < EMBER_MIN(hi * a->block, c); b0 += a->block) {
        const int64_t nb = EMBER_MIN(a->block, c - b0);
        double sg[BN_BLOCK] = {0}, sd[BN_BLOCK] = {0};
        scalar_t kk[BN_BLOCK], gm[BN_BLOCK];
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < nb; k++) {
                const int64_t at = (i * c + b0 + k) * len;
                FN(bn_plane_sums)(a->x + at, a->g + at, len, a->mean[b0 + k], &sg[k], &sd[k]);
            }
        for (int64_t k = 0; k < nb; k++) {
            const int64_t ch = b0 + k;
            const scalar_t r = a->rstd[ch];
            a->dbias[ch] = (scalar_t)sg[k];
            a->dweight[ch] = (scalar_t)(sd[k] * (double)r);
            kk[k] = (scalar_t)sd[k] * r * r / (scalar_t)count;
            gm[k] = (scalar_t)(sg[k] / (double)count);
        }
        if (!a->dx) continue;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < nb; k++) {
                const int64_t ch = b0 + k, at = (i * c + ch) * len;
                const scalar_t *gs = a->g + at, *xs = a->x + at;
                scalar_t *d = a->dx + at;
                const scalar_t m = a->mean[ch], q = kk[k], gmk = gm[k], r = a->rstd[ch];
                const scalar_t w = a->weight ? a->weight[ch] : (scalar_t)1;
                for (int64_t j = 0; j < len; j++)
                    d[j] = EMBER_FMA_T(-(xs[j] - m), q, gs[j] - gmk) * r * w;
            }
    }
}

void FN(bn_backward)(const scalar_t *g, const scalar_t *x, const scalar_t *mean,
                     const scalar_t *rstd, const scalar_t *weight, scalar_t *dx,
                     scalar_t *dweight, scalar_t *dbias, int64_t n, int64_t c, int64_t len) {
    int64_t block, blocks, grain;
    bn_split(n, c, len, &block, &blocks, &grain);
    FN(bn_backward_args) a = {g, x, mean, rstd, weight, dx, dweight, dbias, n, c, len, block};
    ember_parallel_for(FN(bn_backward_task), &a, blocks, grain);
}

/* acc[j] = fma(x[i, j] - mean[j], dy[i, j], acc[j]), row after row of contiguous
 * (rows, cols) blocks: the backward's dot products of PyTorch's rows kernel, one
 * accumulator per channel and thread chunk (ops/_batch_norm_grad.py `rows_backward`). */
void FN(bn_rows_dot)(const scalar_t *x, const scalar_t *dy, const scalar_t *mean,
                     scalar_t *acc, int64_t rows, int64_t cols) {
    for (int64_t i = 0; i < rows; i++) {
        const scalar_t *xr = x + i * cols, *dr = dy + i * cols;
        for (int64_t j = 0; j < cols; j++)
            acc[j] = EMBER_FMA_T(xr[j] - mean[j], dr[j], acc[j]);
    }
}

/* acc[j] = fma(d, d, acc[j]) with d = x[i, j] - mean[j], row after row of a contiguous
 * (rows, cols) block: the variance sum PyTorch's kernel takes over an (N, C) input, one
 * float accumulator per channel and thread chunk (ops/batch_norm.py `_row_statistics`). */
void FN(bn_rows_sq)(const scalar_t *x, const scalar_t *mean, scalar_t *acc, int64_t rows,
                    int64_t cols) {
    for (int64_t i = 0; i < rows; i++) {
        const scalar_t *xr = x + i * cols;
        for (int64_t j = 0; j < cols; j++) {
            const scalar_t d = xr[j] - mean[j];
            acc[j] = EMBER_FMA_T(d, d, acc[j]);
        }
    }
}

/* out = fma(x, alpha[j], beta[j]) and xhat = (x - mean[j]) * rstd[j] over a contiguous
 * (rows, cols) array, in one pass: the forward's normalisation of PyTorch's rows kernel
 * (ops/batch_norm.py `_batch_norm_kernel` on (N, C) and channels-last inputs). */
void FN(bn_rows_apply)(const scalar_t *x, const scalar_t *alpha, const scalar_t *beta,
                       const scalar_t *mean, const scalar_t *rstd, scalar_t *out,
                       scalar_t *xhat, int64_t rows, int64_t cols) {
    for (int64_t i = 0; i < rows; i++) {
        const scalar_t *xr = x + i * cols;
        scalar_t *o = out + i * cols, *h = xhat + i * cols;
        for (int64_t j = 0; j < cols; j++) {
            o[j] = EMBER_FMA_T(xr[j], alpha[j], beta[j]);
            h[j] = (xr[j] - mean[j]) * rstd[j];
        }
    }
}

/* dx over a contiguous (rows, cols) array: with xm = x - mean[j] and gd = dy - gm[j],
 * fma(-xm, k[j], gd) for the channels j < full (PyTorch's vectorised loop), gd - xm * k[j]
 * for the rest, then * rstd[j] and * weight[j] (where given), each rounded: the backward's
 * input gradient of PyTorch's rows kernel (ops/_batch_norm_grad.py `rows_backward`). */
void FN(bn_rows_dx)(const scalar_t *x, const scalar_t *dy, const scalar_t *mean,
                    const scalar_t *k, const scalar_t *gm, const scalar_t *rstd,
                    const scalar_t *weight, scalar_t *dx, int64_t rows, int64_t cols,
                    int64_t full) {
    for (int64_t i = 0; i < rows; i++) {
        const scalar_t *xr = x + i * cols, *dr = dy + i * cols;
        scalar_t *o = dx + i * cols;
        for (int64_t j = 0; j < cols; j++) {
            const scalar_t xm = xr[j] - mean[j], gd = dr[j] - gm[j];
            scalar_t v = j < full ? EMBER_FMA_T(-xm, k[j], gd) : gd - xm * k[j];
            v = v * rstd[j];
            o[j] = weight ? v * weight[j] : v;
        }
    }
}
