/* mlx_math.c: MLX's CPU float32 exp and the core of its erf (mlx/backend/cpu/simd/math.h),
 * the native twins of ember.mlx's NumPy ports (mlx/core/_threefry.py `_expf`, `_erff`),
 * step for step: each multiply-add is one fused multiply-add (C's fmaf, the ports' exact
 * `_fmaf`), so the twins agree bit for bit and both give MLX's numbers. Only the float32 entry points are
 * called (the family is compiled per dtype like every other).
 *
 * Each block of BLOCK values goes through three loops, each of which vectorises: the input
 * made safe to convert to an integer (clamped, NaN to 0), the polynomial and 2**ipart, then
 * MLX's cut-offs on the original values (a select before an integer conversion would keep
 * GCC from vectorising the whole loop under -ftrapping-math).
 */
#include <string.h>

#include "ember.h"

#ifndef MLX_MATH_ONCE
#define MLX_MATH_ONCE
#define BLOCK 256

/* a * b + c rounded once, as MLX's simd fma (and the ports' `_fmaf`) */
static inline float mlx_madd(float a, float b, float c) { return fmaf(a, b, c); }

/* exp of n <= BLOCK values into y: 2**ipart (exponent bits, so 0 below 2**-126) times a
 * degree-6 polynomial in the fraction; NaN kept, inf above 88, 0 below -88. */
static void mlx_exp_block(const float *restrict x, float *restrict y, int64_t n) {
    float safe[BLOCK];
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] > 100.0f ? 100.0f : x[i];
        v = v < -100.0f ? -100.0f : v;
        safe[i] = v == v ? v : 0.0f;
    }
    for (int64_t i = 0; i < n; i++) {
        const float yv = safe[i] * 1.442695f;
        const double d = (double)yv + 0.5;
        double fl = (double)(int32_t)d; /* floor(d), by truncation */
        fl -= (double)(fl > d);
        const float ipart = (float)fl;
        const float f = yv - ipart;
        float p = (float)1.535336188319500e-4;
        p = mlx_madd(p, f, (float)1.339887440266574e-3);
        p = mlx_madd(p, f, (float)9.618437357674640e-3);
        p = mlx_madd(p, f, (float)5.550332471162809e-2);
        p = mlx_madd(p, f, (float)2.402264791363012e-1);
        p = mlx_madd(p, f, (float)6.931472028550421e-1);
        p = mlx_madd(p, f, 1.0f);
        int32_t k = (int32_t)fl;
        const int32_t small = k < -126;
        k = k + small * (-126 - k);
        const int32_t bits = ((k + 127) << 23) * (1 - small); /* (0.0f below 2**-126) */
        float scale;
        memcpy(&scale, &bits, sizeof scale); /* 2**ipart, exactly */
        y[i] = p * scale;
    }
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        float out = v > 88.0f ? INFINITY : y[i];
        out = v < -88.0f ? 0.0f : out;
        y[i] = v != v ? v : out;
    }
}

/* MLX's erf of |v| (Abramowitz & Stegun 7.1.26 on its exp): the caller gives it v's sign */
static void mlx_erf_abs_block(const float *restrict x, float *restrict y, int64_t n) {
    float t[BLOCK], r[BLOCK], e[BLOCK];
    for (int64_t i = 0; i < n; i++) {
        t[i] = 1.0f / mlx_madd((float)0.3275911, fabsf(x[i]), 1.0f);
        float q = mlx_madd((float)1.061405429, t[i], (float)-1.453152027);
        q = mlx_madd(q, t[i], (float)1.421413741);
        q = mlx_madd(q, t[i], (float)-0.284496736);
        r[i] = mlx_madd(q, t[i], (float)0.254829592);
        y[i] = -(x[i] * x[i]);
    }
    mlx_exp_block(y, e, n);
    for (int64_t i = 0; i < n; i++)
        y[i] = mlx_madd(-e[i] * t[i], r[i], 1.0f);
}
#endif

typedef struct {
    const float *x;
    float *y;
    void (*block)(const float *restrict, float *restrict, int64_t);
} FN(mlx_map_args);

static void FN(mlx_map_task)(void *p, int64_t lo, int64_t hi) {
    const FN(mlx_map_args) *a = p;
    for (int64_t i = lo; i < hi; i += BLOCK)
        a->block(a->x + i, a->y + i, EMBER_MIN(BLOCK, hi - i));
}

void FN(mlx_exp_map)(const float *x, float *y, int64_t n) {
    FN(mlx_map_args) a = {x, y, mlx_exp_block};
    ember_parallel_for(FN(mlx_map_task), &a, n, 16384);
}

void FN(mlx_erf_abs_map)(const float *x, float *y, int64_t n) {
    FN(mlx_map_args) a = {x, y, mlx_erf_abs_block};
    ember_parallel_for(FN(mlx_map_task), &a, n, 16384);
}
