/* normal.c: the Box-Muller step of PyTorch's normal fill (`normal_fill_16`), blocks of 16
 * uniforms in, 16 normals out, and the final v * std + mean. The NumPy twins are
 * ember/ops/_rng_math.py (`log_f32`, `sincos_f32`, `box_muller_f32_avx2`) and
 * ember/ops/_rng_kernels.py (`box_muller_f64`, `affine`); this file takes the same steps
 * in the same precisions, so the bits are theirs:
 *
 * - float32 (AVX2 profile): Cephes log and sincos in float. Where NumPy rounds a float
 *   multiply-add through double (`_Lanes.fma`: the float product is exact in double, then
 *   one double and one float rounding), so does this: `(float)((double)a * b + c)`.
 * - float64: libm log, cos and sin, which is what the NumPy path calls (`math.log` etc.).
 * - the affine step: C's fmaf / fma, the single rounding `fma32` / `fma64` emulate.
 *
 * Compiled with -ffp-contract=off, so no product is fused except where fma is written.
 * Every block is independent: blocks run on the thread pool.
 */
#ifndef EMBER_NORMAL_ONCE
#define EMBER_NORMAL_ONCE

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ember.h"

static const float LOG_P[9] = {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                               -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                               2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f};
static const float SIN_P[3] = {-1.9515295891e-4f, 8.3321608736e-3f, -1.6666654611e-1f};
static const float COS_P[3] = {2.443315711809948e-5f, -1.388731625493765e-3f,
                               4.166664568298827e-2f};
#define SQRTHF 0.707106781186547524f
#define LOG_Q1 (-2.12194440e-4f)
#define LOG_Q2 0.693359375f
#define FOPI 1.27323954473516f
#define DP1 (-0.78515625f)
#define DP2 (-2.4187564849853515625e-4f)
#define DP3 (-3.77489497744594108e-8f)
#define TWO_PI_F ((float)(2.0 * 3.14159265358979323846))

static inline uint32_t f2u(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static inline float u2f(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* a * x + c with the product exact in double, then rounded to double and to float. */
static inline float mad64(float a, double x, double c) {
    return (float)((double)a * x + c);
}

/* Cephes log of a positive normal float, as `_rng_math.log_f32`. */
static inline float cephes_logf(float x) {
    const uint32_t bits = f2u(x);
    float e = (float)((int32_t)(bits >> 23) - 126);
    const float m = u2f((bits & 0x807FFFFFu) | 0x3F000000u);
    /* small = (m < SQRTHF) as 1.0f or 0.0f, chosen on the bits (m > 0): GCC turns a float
     * select into a branch it may not if-convert, and the block loop would stay scalar */
    const float small = u2f((0u - (uint32_t)(f2u(m) < f2u(SQRTHF))) & 0x3F800000u);
    e = e - small;
    const float t = (m - 1.0f) + small * m;
    const float z = t * t;
    float y = mad64(t, (double)LOG_P[0], (double)LOG_P[1]);
    _Pragma("GCC unroll 8") /* (unrolled before the vectoriser sees the block loop) */
    for (int k = 2; k < 9; k++) y = mad64(y, (double)t, (double)LOG_P[k]);
    y = y * t;
    y = mad64(y, (double)z, (double)(e * LOG_Q1));
    y = y - z * 0.5f;
    y = y + t;
    return y + e * LOG_Q2;
}

/* Cephes sin and cos of a non-negative float, as `_rng_math.sincos_f32`. */
static inline void cephes_sincosf(float x, float *s, float *c) {
    int32_t j = (int32_t)(x * FOPI);
    j = (j + 1) & ~1;
    const float yf = (float)j;
    float r = x + yf * DP1;
    r = r + yf * DP2;
    r = (float)((double)yf * (double)DP3 + (double)r);
    const float z = r * r;
    const double z64 = (double)z;
    float yc = (float)(z64 * (double)COS_P[0] + (double)COS_P[1]);
    yc = mad64(yc, z64, (double)COS_P[2]);
    yc = yc * z;
    yc = mad64(yc, z64, (double)(z * -0.5f));
    yc = yc + 1.0f;
    float ys = (float)(z64 * (double)SIN_P[0] + (double)SIN_P[1]);
    ys = mad64(ys, z64, (double)SIN_P[2]);
    ys = ys * z;
    ys = mad64(ys, (double)r, (double)r);
    /* bit 1 of j swaps the polynomials (a bit mask, not a branch: the loop vectorises) */
    const uint32_t swap = 0u - (((uint32_t)j >> 1) & 1u);
    const uint32_t ysb = f2u(ys), ycb = f2u(yc);
    uint32_t sb = (ysb & ~swap) | (ycb & swap), cb = (ycb & ~swap) | (ysb & swap);
    sb ^= ((uint32_t)j & 4u) << 29;
    cb ^= ((uint32_t)(~(j - 2)) & 4u) << 29;
    *s = u2f(sb);
    *c = u2f(cb);
}

typedef struct {
    const void *u;
    void *out;
} bm_ctx;

static void bm_f32_blocks(void *vctx, int64_t lo, int64_t hi) {
    const bm_ctx *ctx = vctx;
    for (int64_t b = lo; b < hi; b++) {
        const float *u = (const float *)ctx->u + 16 * b;
        float *o = (float *)ctx->out + 16 * b;
        for (int k = 0; k < 8; k++) {
            const float radius = sqrtf(cephes_logf(1.0f - u[k]) * -2.0f);
            float s, c;
            cephes_sincosf(u[8 + k] * TWO_PI_F, &s, &c);
            o[k] = radius * c;
            o[8 + k] = radius * s;
        }
    }
}

static void bm_f64_blocks(void *vctx, int64_t lo, int64_t hi) {
    const bm_ctx *ctx = vctx;
    for (int64_t b = lo; b < hi; b++) {
        const double *u = (const double *)ctx->u + 16 * b;
        double *o = (double *)ctx->out + 16 * b;
        for (int k = 0; k < 8; k++) {
            const double radius = sqrt(-2.0 * log(1.0 - u[k]));
            const double theta = u[8 + k] * (2.0 * 3.14159265358979323846);
            o[k] = radius * cos(theta);
            o[8 + k] = radius * sin(theta);
        }
    }
}

/* `blocks` blocks of 16 float uniforms -> PyTorch AVX2's r cos (lanes 0-7), r sin (8-15). */
void ember_normal16_float(const float *u, float *out, int64_t blocks) {
    bm_ctx ctx = {u, out};
    ember_parallel_for(bm_f32_blocks, &ctx, blocks, 1024);
}

/* The same for doubles, with libm's log, cos and sin (`_rng_kernels.box_muller_f64`). */
void ember_normal16_double(const double *u, double *out, int64_t blocks) {
    bm_ctx ctx = {u, out};
    ember_parallel_for(bm_f64_blocks, &ctx, blocks, 256);
}

/* v = v * s + m in place: one rounding where `fused`, else two (`_rng_kernels.affine`). */
void ember_affine_float(float *v, int64_t n, float s, float m, int fused) {
    if (fused) {
        for (int64_t i = 0; i < n; i++) v[i] = fmaf(v[i], s, m);
    } else {
        for (int64_t i = 0; i < n; i++) v[i] = v[i] * s + m;
    }
}

void ember_affine_double(double *v, int64_t n, double s, double m, int fused) {
    if (fused) {
        for (int64_t i = 0; i < n; i++) v[i] = fma(v[i], s, m);
    } else {
        for (int64_t i = 0; i < n; i++) v[i] = v[i] * s + m;
    }
}

#endif
