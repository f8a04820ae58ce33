/* mlx_random.c: the hot kernels of MLX's random samplers, the native twins of ember.mlx's
 * NumPy ports (mlx/core/_threefry.py), step for step, so both give MLX's bits:
 *
 * - the threefry2x32 hash of the counter pairs behind `bits` (`_threefry2x32`, `bits`);
 * - glibc's float32 logf (`_logf`): a table and a polynomial in double, rounded to float once,
 *   computed here as the port computes it, so it does not depend on this platform's libm;
 * - glibc's float32 log1pf (`_log1pf`, fdlibm's algorithm in float32), for laplace;
 * - MLX's float32 erfinv (`_erfinvf`): logf(1 - a^2) and one of two fmaf Horner polynomials
 *   (fmaf is correctly rounded, as the port's `_fmaf`).
 *
 * The toolchain compiles with -ffp-contract=off: no multiply-add is fused but the fmaf calls.
 * Only the float32 entry points are called (the family is compiled per dtype like every other).
 */
#include <string.h>

#include "ember.h"
#include "ember_math.h"

#ifndef MLX_RANDOM_ONCE
#define MLX_RANDOM_ONCE

/* -- threefry2x32 (5 blocks of 4 rounds; key schedule k0, k1, k0 ^ k1 ^ parity) -- */

static const int THREEFRY_ROT[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};

static inline uint32_t rotl32(uint32_t v, int r) { return (v << r) | (v >> (32 - r)); }

static inline void threefry2x32(const uint32_t ks[3], uint32_t c0, uint32_t c1, uint32_t *o0,
                                uint32_t *o1) {
    uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
    for (int block = 0; block < 5; block++) {
        for (int j = 0; j < 4; j++) {
            x0 += x1;
            x1 = rotl32(x1, THREEFRY_ROT[block % 2][j]);
            x1 ^= x0;
        }
        x0 += ks[(block + 1) % 3];
        x1 += ks[(block + 2) % 3] + (uint32_t)(block + 1);
    }
    *o0 = x0;
    *o1 = x1;
}

typedef struct {
    uint32_t ks[3];
    uint32_t *out;
    int64_t half, second; /* pairs (i, i + second) for i < half; word i + second gets x1 */
} words_args;

static void words_task(void *p, int64_t lo, int64_t hi) {
    const words_args *a = p;
    for (int64_t i = lo; i < hi; i++)
        threefry2x32(a->ks, (uint32_t)i, (uint32_t)(i + a->second), &a->out[i],
                     &a->out[i + a->second]);
}

/* -- glibc's logf (Arm optimized-routines): k ln2 + log(c) + log1p(z/c - 1), in double -- */

static const double LOGF_INVC[16] = {
    0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0, 0x1.49539f0f010bp+0, 0x1.3c995b0b80385p+0,
    0x1.30d190c8864a5p+0, 0x1.25e227b0b8eap+0,  0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0,
    0x1.0953f419900a7p+0, 0x1p+0,               0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1,
    0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1, 0x1.886e6037841edp-1, 0x1.767dcf5534862p-1};
static const double LOGF_LOGC[16] = {
    -0x1.57bf7808caadep-2, -0x1.2bef0a7c06ddbp-2, -0x1.01eae7f513a67p-2, -0x1.b31d8a68224e9p-3,
    -0x1.6574f0ac07758p-3, -0x1.1aa2bc79c81p-3,   -0x1.a4e76ce8c0e5ep-4, -0x1.1973c5a611cccp-4,
    -0x1.252f438e10c1ep-5, 0x0p+0,                0x1.aa5aa5df25984p-5,  0x1.c5e53aa362eb4p-4,
    0x1.526e57720db08p-3,  0x1.bc2860d22477p-3,   0x1.1058bc8a07ee1p-2,  0x1.4043057b6ee09p-2};
#define LOGF_LN2 0x1.62e42fefa39efp-1
#define LOGF_P0 -0x1.00ea348b88334p-2
#define LOGF_P1 0x1.5575b0be00b6ap-2
#define LOGF_P2 -0x1.ffffef20a4123p-2

static inline float mlx_logf(float x) {
    int64_t ix = ember_bits_f(x);
    if (x == 1.0f) return 0.0f;
    if (ix >= 0x7F800000 || ix == 0) { /* NaN, inf, negatives, +0 (and -0, below) */
        if (x == 0.0f) return -INFINITY;
        if (x != x || x == INFINITY) return x;
        return NAN;
    }
    if (ix < 0x00800000) ix = (int64_t)ember_bits_f(x * 0x1p23f) - (23 << 23); /* subnormal */
    const int64_t tmp = ix - 0x3F330000;
    const int i = (int)((tmp >> 19) & 15);
    const int64_t k = tmp >> 23; /* (arithmetic shift: tmp < 0 below 0x3F330000) */
    const double z = (double)ember_float_of((uint32_t)(ix - (tmp & ((int64_t)0x1FF << 23))));
    const double r = z * LOGF_INVC[i] - 1.0;
    const double y0 = LOGF_LOGC[i] + (double)k * LOGF_LN2;
    const double r2 = r * r;
    double y = LOGF_P1 * r + LOGF_P2;
    y = LOGF_P0 * r2 + y;
    y = y * r2 + (y0 + r);
    return (float)y;
}

/* -- MLX's erfinv: a P(t), t = logf(1 - a^2), P by Giles' split at |t| = 6.125 -- */

static inline float mlx_erfinvf(float a) {
    const float t = mlx_logf(fmaf(a, 0.0f - a, 1.0f));
    float p;
    if (fabsf(t) > 6.125f) {
        p = 3.03697567e-10f;
        p = fmaf(p, t, 2.93243101e-8f);
        p = fmaf(p, t, 1.22150334e-6f);
        p = fmaf(p, t, 2.84108955e-5f);
        p = fmaf(p, t, 3.93552968e-4f);
        p = fmaf(p, t, 3.02698812e-3f);
        p = fmaf(p, t, 4.83185798e-3f);
        p = fmaf(p, t, -2.64646143e-1f);
        p = fmaf(p, t, 8.40016484e-1f);
    } else {
        p = 5.43877832e-9f;
        p = fmaf(p, t, 1.43285448e-7f);
        p = fmaf(p, t, 1.22774793e-6f);
        p = fmaf(p, t, 1.12963626e-7f);
        p = fmaf(p, t, -5.61530760e-5f);
        p = fmaf(p, t, -1.47697632e-4f);
        p = fmaf(p, t, 2.31468678e-3f);
        p = fmaf(p, t, 1.15392581e-2f);
        p = fmaf(p, t, -2.32015476e-1f);
        p = fmaf(p, t, 8.86226892e-1f);
    }
    return a * p;
}

/* -- glibc's log1pf (fdlibm's s_log1pf.c): float32 throughout -- */

#define LN2_HI 6.9313812256e-01f
#define LN2_LO 9.0580006145e-06f

static inline float mlx_log1pf(float x) {
    const int32_t hx = (int32_t)ember_bits_f(x);
    const int32_t ax = hx & 0x7FFFFFFF;
    if (x != x) return x;
    if (x <= -1.0f) return x == -1.0f ? -INFINITY : NAN;
    if (x == INFINITY) return x;
    if (ax < 0x31000000) return ax < 0x24800000 ? x : x - x * x * 0.5f; /* |x| < 2**-29 */
    float f, c = 0.0f;
    int32_t k, hu;
    if (hx < 0x3ED413D7 && (hx > 0 || hx <= (int32_t)0xBE95F61Fu)) { /* -0.2929 < x < 0.41422 */
        k = 0;
        f = x;
        hu = 1;
    } else {
        float u;
        if (hx < 0x5A000000) {
            u = 1.0f + x;
            hu = (int32_t)ember_bits_f(u);
            k = (hu >> 23) - 127;
            c = (k > 0 ? 1.0f - (u - x) : x - (u - 1.0f)) / u; /* (the rounding of 1 + x) */
        } else {
            u = x;
            hu = hx;
            k = (hu >> 23) - 127;
        }
        hu &= 0x007FFFFF;
        if (hu < 0x3504F7) {
            u = ember_float_of((uint32_t)(hu | 0x3F800000));
        } else {
            u = ember_float_of((uint32_t)(hu | 0x3F000000));
            k += 1;
            hu = (0x00800000 - hu) >> 2;
        }
        f = u - 1.0f;
    }
    const float kf = (float)k;
    const float hfsq = 0.5f * f * f;
    if (hu == 0) { /* |f| < 2**-20 */
        if (f == 0.0f) return k == 0 ? 0.0f : kf * LN2_HI + (c + kf * LN2_LO);
        const float r = hfsq * (1.0f - (float)0.66666666666666666 * f);
        return k == 0 ? f - r : kf * LN2_HI - ((r - (kf * LN2_LO + c)) - f);
    }
    const float s = f / (2.0f + f);
    const float z = s * s;
    float p = 1.4798198640e-01f;
    p = 1.5313838422e-01f + z * p;
    p = 1.8183572590e-01f + z * p;
    p = 2.2222198546e-01f + z * p;
    p = 2.8571429849e-01f + z * p;
    p = 4.0000000596e-01f + z * p;
    p = 6.6666668653e-01f + z * p;
    const float r = z * p;
    if (k == 0) return f - (hfsq - s * (hfsq + r));
    return kf * LN2_HI - ((hfsq - (s * (hfsq + r) + (kf * LN2_LO + c))) - f);
}

typedef struct {
    const float *x;
    float *y;
} map_args;

static void logf_task(void *p, int64_t lo, int64_t hi) {
    const map_args *a = p;
    for (int64_t i = lo; i < hi; i++) a->y[i] = mlx_logf(a->x[i]);
}

static void log1pf_task(void *p, int64_t lo, int64_t hi) {
    const map_args *a = p;
    for (int64_t i = lo; i < hi; i++) a->y[i] = mlx_log1pf(a->x[i]);
}

static void erfinvf_task(void *p, int64_t lo, int64_t hi) {
    const map_args *a = p;
    for (int64_t i = lo; i < hi; i++) a->y[i] = mlx_erfinvf(a->x[i]);
}
#endif

/* The n_words words of MLX's `bits` under key: pairs (i, i + ceil(n/2)) for i < n / 2, their
 * halves to words i and i + ceil(n/2); for odd n the middle word is the first half of the
 * hash of (n / 2, 0). */
void FN(mlx_threefry_words)(const uint32_t *key, uint32_t *out, int64_t n_words) {
    const int64_t half = n_words / 2, odd = n_words % 2;
    words_args a = {{key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu}, out, half, half + odd};
    ember_parallel_for(words_task, &a, half, 65536);
    if (odd) {
        uint32_t unused;
        threefry2x32(a.ks, (uint32_t)half, 0u, &out[half], &unused);
    }
}

void FN(mlx_logf_map)(const float *x, float *y, int64_t n) {
    map_args a = {x, y};
    ember_parallel_for(logf_task, &a, n, 16384);
}

void FN(mlx_erfinvf_map)(const float *x, float *y, int64_t n) {
    map_args a = {x, y};
    ember_parallel_for(erfinvf_task, &a, n, 16384);
}

void FN(mlx_log1pf_map)(const float *x, float *y, int64_t n) {
    map_args a = {x, y};
    ember_parallel_for(log1pf_task, &a, n, 16384);
}
