/* random.c: the generator's words (a 32-bit Mersenne Twister, MT19937) turned into numbers in
 * one pass, without the array of words in between (and the words themselves). Written once against scalar_t and
 * FN(name); kernels.py compiles it for float and double.
 *
 * The state is NumPy's MT19937 (624 words and the index of the next one, 624: twist first),
 * handed in and out by the caller (ember/ops/_rng_native.py), so the stream continues where
 * NumPy's own draws leave it and the reverse. A double uniform is PyTorch's: two words, the
 * first's low 21 bits high, u = hi 2^-21 + lo 2^-53 (exact: 53 bits). Serial, as PyTorch's
 * draws are: every number depends on the words before it.
 */
#ifndef EMBER_RANDOM_ONCE
#define EMBER_RANDOM_ONCE

#include <stdint.h>

#include "ember.h"

#define MT_N 624
#define MT_M 397

typedef struct {
    uint32_t *key;
    int64_t pos;
} mt_state;

/* The next 624 state words from the last 624 (the twist). */
static inline uint32_t mt_mix(uint32_t a, uint32_t b, uint32_t c) {
    const uint32_t y = (a & 0x80000000u) | (b & 0x7fffffffu);
    return c ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
}

/* The next 624 state words from the last 624 (the twist): word i from words i, i + 1 and
 * i + 397 (mod 624), the later ones already new where they wrapped around. */
static void mt_twist(uint32_t *k) {
    int i = 0;
    for (; i < MT_N - MT_M; i++) k[i] = mt_mix(k[i], k[i + 1], k[i + MT_M]);
    for (; i < MT_N - 1; i++) k[i] = mt_mix(k[i], k[i + 1], k[i + MT_M - MT_N]);
    k[MT_N - 1] = mt_mix(k[MT_N - 1], k[0], k[MT_M - 1]);
}

/* The next n tempered words into w, a run of state words at a time (twisting where the
 * run ends), so the tempering vectorises. */
static void mt_fill(mt_state *s, uint32_t *restrict w, int64_t n) {
    while (n > 0) {
        if (s->pos >= MT_N) {
            mt_twist(s->key);
            s->pos = 0;
        }
        const int64_t k = EMBER_MIN(n, MT_N - s->pos);
        const uint32_t *src = s->key + s->pos;
        for (int64_t i = 0; i < k; i++) {
            uint32_t y = src[i];
            y ^= y >> 11;
            y ^= (y << 7) & 0x9d2c5680u;
            y ^= (y << 15) & 0xefc60000u;
            y ^= y >> 18;
            w[i] = y;
        }
        s->pos += k;
        w += k;
        n -= k;
    }
}

#define MT_BLOCK 512 /* uniforms per block of words */

/* The double uniform of words hi, lo (both products and the sum are exact). */
static inline double mt_double(uint32_t hi, uint32_t lo) {
    return (double)(hi & 0x1fffffu) * 0x1p-21 + (double)lo * 0x1p-53;
}

/* out[i] = the next n words; *pos is the state's index, updated. */
void ember_mt_words(uint32_t *key, int64_t *pos, uint32_t *out, int64_t n) {
    mt_state s = {key, *pos};
    mt_fill(&s, out, n);
    *pos = s.pos;
}

/* out[i] = the next n float uniforms in [0, 1): a word's low 24 bits times 2^-24 (exact). */
void ember_mt_floats(uint32_t *key, int64_t *pos, float *out, int64_t n) {
    mt_state s = {key, *pos};
    uint32_t w[2 * MT_BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += 2 * MT_BLOCK) {
        const int64_t m = EMBER_MIN(2 * MT_BLOCK, n - i0);
        mt_fill(&s, w, m);
        for (int64_t j = 0; j < m; j++) out[i0 + j] = (float)(w[j] & 0xffffffu) * 0x1p-24f;
    }
    *pos = s.pos;
}

/* out[i] = the next n double uniforms; *pos is the state's index, updated. */
void ember_mt_doubles(uint32_t *key, int64_t *pos, double *out, int64_t n) {
    mt_state s = {key, *pos};
    uint32_t w[2 * MT_BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += MT_BLOCK) {
        const int64_t m = EMBER_MIN(MT_BLOCK, n - i0);
        mt_fill(&s, w, 2 * m);
        for (int64_t j = 0; j < m; j++) out[i0 + j] = mt_double(w[2 * j], w[2 * j + 1]);
    }
    *pos = s.pos;
}

/* out = a permutation of 0..n-1 (PyTorch's randperm for n < (2^32-1)/20): out = arange(n),
 * then for i < n - 1 the next word w gives z = w mod (n - i) and out[i] swaps with out[i + z].
 * n - 1 words; *pos updated. */
void ember_mt_randperm(uint32_t *key, int64_t *pos, int64_t *out, int64_t n) {
    mt_state s = {key, *pos};
    uint32_t w[MT_BLOCK];
    for (int64_t i = 0; i < n; i++) out[i] = i;
    for (int64_t i0 = 0; i0 < n - 1; i0 += MT_BLOCK) {
        const int64_t m = EMBER_MIN(MT_BLOCK, n - 1 - i0);
        mt_fill(&s, w, m);
        for (int64_t j = 0; j < m; j++) {
            const int64_t i = i0 + j;
            const int64_t k = i + (int64_t)((uint64_t)w[j] % (uint64_t)(n - i));
            const int64_t t = out[i];
            out[i] = out[k];
            out[k] = t;
        }
    }
    *pos = s.pos;
}

#endif

/* out[i] = one where the i-th next double uniform is < p, else zero (bernoulli_(p) and the
 * scaled mask of dropout); *pos updated. */
void FN(mt_bernoulli)(uint32_t *key, int64_t *pos, scalar_t *out, int64_t n, double p,
                      scalar_t one, scalar_t zero) {
    mt_state s = {key, *pos};
    uint32_t w[2 * MT_BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += MT_BLOCK) {
        const int64_t m = EMBER_MIN(MT_BLOCK, n - i0);
        mt_fill(&s, w, 2 * m);
        for (int64_t j = 0; j < m; j++)
            out[i0 + j] = mt_double(w[2 * j], w[2 * j + 1]) < p ? one : zero;
    }
    *pos = s.pos;
}
