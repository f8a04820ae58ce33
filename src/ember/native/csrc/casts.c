/* casts.c: float32 <-> float16 and float32 -> bfloat16 conversions, NumPy's bits.
 *
 * NumPy converts float16 one element at a time in software and ml_dtypes rounds bfloat16
 * likewise, 10-20x the memory traffic's time; these loops vectorise. Every finite value
 * and infinity rounds to nearest even, as the hardware conversion does (float16) and
 * integer arithmetic does here (bfloat16). NaNs are written as NumPy's and ml_dtypes'
 * software writes them, not as the hardware does (which sets the quiet bit of a
 * signalling NaN): float16 keeps the top ten bits of the payload (one if they are all
 * zero), float16 -> float32 shifts it back, bfloat16 writes the sign and 0x7fc0.
 * Contiguous arrays; the calls are split over the kernel threads. The float16 kernels need
 * F16C (every x86-64 CPU since 2013): without it `casts_have_half` says 0 and NumPy casts.
 */
#include <stdint.h>
#include <string.h>

#include "ember.h"

typedef struct {
    const void *in;
    void *out;
} FN(cast_args);

static inline uint32_t FN(float_bits)(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

/* NumPy's float16 bits of a float32 NaN `u` */
static inline uint16_t FN(half_nan)(uint32_t u) {
    uint16_t h = (uint16_t)(((u >> 16) & 0x8000u) | (0x7c00u + ((u & 0x7fffffu) >> 13)));
    return h + (uint16_t)((h & 0x7fffu) == 0x7c00u);
}

/* NumPy's float32 bits of a float16 NaN `b` */
static inline uint32_t FN(float_nan)(uint16_t b) {
    return ((uint32_t)(b & 0x8000u) << 16) | 0x7f800000u | ((uint32_t)(b & 0x3ffu) << 13);
}

#ifdef __F16C__
#include <immintrin.h>

/* Eight at a time through F16C; a block holding a NaN has its NaNs rewritten after. */
static void FN(half_from_float_task)(void *p, int64_t lo, int64_t hi) {
    const FN(cast_args) *t = p;
    const float *restrict x = t->in;
    uint16_t *restrict out = t->out;
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            for (int j = 0; j < 8; j++) {
                const uint32_t u = FN(float_bits)(x[i + j]);
                if ((u & 0x7fffffffu) > 0x7f800000u) out[i + j] = FN(half_nan)(u);
            }
    }
    for (; i < hi; i++) {
        const uint32_t u = FN(float_bits)(x[i]);
        out[i] = (u & 0x7fffffffu) > 0x7f800000u ? FN(half_nan)(u) : _cvtss_sh(x[i], 0);
    }
}

static void FN(float_from_half_task)(void *p, int64_t lo, int64_t hi) {
    const FN(cast_args) *t = p;
    const uint16_t *restrict x = t->in;
    float *restrict out = t->out;
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_ps(out + i, v);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
            for (int j = 0; j < 8; j++)
                if ((x[i + j] & 0x7fffu) > 0x7c00u) {
                    const uint32_t u = FN(float_nan)(x[i + j]);
                    memcpy(&out[i + j], &u, 4);
                }
    }
    for (; i < hi; i++) {
        if ((x[i] & 0x7fffu) > 0x7c00u) {
            const uint32_t u = FN(float_nan)(x[i]);
            memcpy(&out[i], &u, 4);
        } else {
            out[i] = _cvtsh_ss(x[i]);
        }
    }
}

int FN(casts_have_half)(void) { return 1; }
#else
int FN(casts_have_half)(void) { return 0; }
#endif

static void FN(bfloat_from_float_task)(void *p, int64_t lo, int64_t hi) {
    const FN(cast_args) *t = p;
    const float *restrict x = t->in;
    uint16_t *restrict out = t->out;
    for (int64_t i = lo; i < hi; i++) {
        const uint32_t u = FN(float_bits)(x[i]);
        const uint16_t rounded = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        const uint16_t nan = (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);
        out[i] = ((u & 0x7fffffffu) > 0x7f800000u) ? nan : rounded;
    }
}

#define EMBER_CAST(name)                                                                   \
    void FN(name)(const void *in, void *out, int64_t n) {                                  \
        FN(cast_args) t = {in, out};                                                       \
        ember_parallel_for(FN(name##_task), &t, n, 1 << 16);                               \
    }

#ifdef __F16C__
EMBER_CAST(half_from_float)
EMBER_CAST(float_from_half)
#endif
EMBER_CAST(bfloat_from_float)

#undef EMBER_CAST
