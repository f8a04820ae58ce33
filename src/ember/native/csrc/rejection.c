/* rejection.c: the serial rejection samplers, over a stream drawn ahead.
 *
 * PyTorch draws a gamma or Poisson sample per element, one after another, each try taking
 * double uniforms (gamma: a normal too, the serial Box-Muller pair with one half cached)
 * from the generator. The caller (distributions/gamma.py, ops/_rng_kernels.py) draws the
 * doubles ahead and gives, for every stream position p, the uniform u[p] and (gamma) the
 * Box-Muller pair (cos[p], sin[p]) that a normal drawn at p would give; these loops read
 * them in PyTorch's order, with the C library's log, exp and lgamma as PyTorch's kernels
 * call them, so the samples are its bits. Where the stream drawn ahead runs out inside an
 * element, the element is undone and the call returns: the caller draws more and calls
 * again from there.
 *
 * Compiled once whatever the family's dtype (the stream is double).
 */
#ifndef EMBER_REJECTION_ONCE
#define EMBER_REJECTION_ONCE

#include <math.h>
#include <stdint.h>

typedef struct {
    int64_t p;     /* the next stream position */
    double cache;  /* the cached half of the last Box-Muller pair */
    int64_t held;  /* whether `cache` holds one */
} gamma_stream;

/* Marsaglia-Tsang tries for the live elements k = start, start + 1, ...: element live[k]
 * gets v (out) and, if `boosted[k]`, the stream position of its boost's uniform
 * (boost_at); d and c are its constants. Returns the first element not done (nlive when
 * all are), with the stream's state in *s. */
int64_t gamma_tries(const int64_t *live, int64_t nlive, int64_t start, const uint8_t *boosted,
                    const double *d, const double *c, const double *u, const double *cos_,
                    const double *sin_, int64_t avail, double squeeze, gamma_stream *s,
                    double *out, int64_t *boost_at) {
    int64_t p = s->p, held = s->held;
    double cache = s->cache;
    for (int64_t k = start; k < nlive; k++) {
        const int64_t p0 = p, held0 = held; /* (to undo the element) */
        const double cache0 = cache;
        const int64_t i = live[k];
        if (boosted[k]) {
            boost_at[i] = p;
            p += 1;
        }
        const double dk = d[k], ck = c[k];
        for (;;) {
            double x, y;
            do { /* PyTorch's `do ... while (y <= 0)`: a NaN y goes on */
                if (held) {
                    x = cache;
                    held = 0;
                } else {
                    if (p + 2 > avail) goto out_of_stream;
                    x = cos_[p];
                    cache = sin_[p];
                    held = 1;
                    p += 2;
                }
                y = 1.0 + ck * x;
            } while (y <= 0);
            if (p + 1 > avail) goto out_of_stream;
            const double v = y * y * y;
            const double w = 1.0 - u[p];
            p += 1;
            const double xx = x * x;
            if (w < 1.0 - squeeze * xx * xx || log(w) < 0.5 * xx + dk * (1.0 - v + log(v))) {
                out[i] = v;
                break;
            }
        }
        continue;
    out_of_stream:
        if (boosted[k]) boost_at[i] = -1;
        s->p = p0;
        s->held = held0;
        s->cache = cache0;
        return k;
    }
    s->p = p;
    s->held = held;
    s->cache = cache;
    return nlive;
}

/* PyTorch's sample_poisson for rates lams[start], lams[start + 1], ...: Hormann's
 * transformed rejection (PTRS) for a rate of 10 or more, else a product of uniforms until
 * it falls to exp(-rate); a rate of 0 draws nothing. Returns the first rate not done (n
 * when all are; an infinite rate is left to the caller's loop), the stream position in
 * *p_io. */
int64_t poisson_tries(const double *lams, int64_t n, int64_t start, const double *u,
                      int64_t avail, int64_t *p_io, double *out) {
    int64_t p = *p_io;
    for (int64_t i = start; i < n; i++) {
        const int64_t p0 = p;
        const double lam = lams[i];
        if (lam >= 10) {
            if (isinf(lam)) { /* (the caller's loop says what an infinite rate does) */
                *p_io = p;
                return i;
            }
            const double slam = sqrt(lam), loglam = log(lam);
            const double b = 0.931 + 2.53 * slam;
            const double a = -0.059 + 0.02483 * b;
            const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
            const double vr = 0.9277 - 3.6224 / (b - 2);
            double k;
            for (;;) {
                if (p + 2 > avail) goto out_of_stream;
                const double us = u[p] - 0.5, v = u[p + 1];
                p += 2;
                const double ua = 0.5 - fabs(us);
                k = floor((2 * a / ua + b) * us + lam + 0.43);
                if (ua >= 0.07 && v <= vr) break;
                if (k < 0 || (ua < 0.013 && v > ua)) continue;
                const double lhs = log(v) + log(inv_alpha) - log(a / (ua * ua) + b);
                if (lhs <= -lam + k * loglam - lgamma(k + 1.0)) break;
            }
            out[i] = k;
        } else if (lam != 0) {
            const double enlam = exp(-lam);
            double prod = 1.0;
            int64_t x = 0;
            for (;;) {
                if (p >= avail) goto out_of_stream;
                prod *= u[p];
                p += 1;
                if (prod > enlam)
                    x += 1;
                else
                    break;
            }
            out[i] = (double)x;
        }
        continue;
    out_of_stream:
        *p_io = p0;
        return i;
    }
    *p_io = p;
    return n;
}

/* PyTorch's sample_binomial, element after element: the inversion of geometric waiting
 * times while count * p < 10, else Hormann's BTRS, on the smaller of p and 1 - p. `single`:
 * the kernel's scalar type is float, so its products of count and p (and the other steps
 * ops/binomial.py marks) round to float, and its log1p is log1pf. */
static inline double bn_round(double v, int single) { return single ? (double)(float)v : v; }

static const double BN_STIRLING_TAIL[10] = {
    0.0810614667953272,  0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
    0.0166446911898211,  0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
    0.00925546218271273, 0.00833056343336287};

static inline double bn_stirling_tail(double k) {
    if (k <= 9) return BN_STIRLING_TAIL[(int)k];
    const double kp1sq = (k + 1) * (k + 1);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

/* One draw at p <= 1/2 from u[*p_io ...]; 0 where the stream runs out (*ok cleared). */
static double bn_draw(double count, double prob, int single, const double *u, int64_t avail,
                      int64_t *p_io, int *ok) {
    int64_t p = *p_io;
    if (!(bn_round(count * prob, single) >= 10.0)) { /* inversion */
        const double logprob = single ? (double)log1pf((float)-prob) : log1p(-prob);
        double geom_sum = 0.0, num_geom = 0.0;
        for (;;) {
            if (p >= avail) { *ok = 0; return 0.0; }
            const double uu = u[p++];
            const double geom = ceil((uu > 0 ? log(uu) : -INFINITY) / logprob);
            geom_sum += geom;
            if (geom_sum > count) { *p_io = p; return num_geom; }
            num_geom += 1;
        }
    }
    const double stddev = sqrt(bn_round(bn_round(count * prob, single) *
                                        bn_round(1 - prob, single), single));
    const double b = 1.15 + 2.53 * stddev;
    const double a = -0.0873 + 0.0248 * b + 0.01 * prob;
    const double c = bn_round(count * prob, single) + 0.5;
    const double v_r = 0.92 - 4.2 / b;
    const double ratio = bn_round(prob / bn_round(1 - prob, single), single);
    const double alpha = (2.83 + 5.1 / b) * stddev;
    const double m = floor(bn_round(bn_round(count + 1, single) * prob, single));
    for (;;) {
        if (p + 2 > avail) { *ok = 0; return 0.0; }
        const double uu = u[p] - 0.5;
        double v = u[p + 1];
        p += 2;
        const double us = 0.5 - fabs(uu);
        const double k = bn_round(floor((2 * a / us + b) * uu + c), single);
        if (k < 0 || k > count) continue;
        if (us >= 0.07 && v <= v_r) { *p_io = p; return k; }
        v = log(v * alpha / (a / (us * us) + b));
        const double bound = ((m + 0.5) * log((m + 1) / (ratio * (count - m + 1)))
                              + (count + 1) * log((count - m + 1) / (count - k + 1))
                              + (k + 0.5) * log(ratio * (count - k + 1) / (k + 1))
                              + bn_stirling_tail(m) + bn_stirling_tail(count - m)
                              - bn_stirling_tail(k) - bn_stirling_tail(count - k));
        if (v <= bound) { *p_io = p; return k; }
    }
}

/* Draws for elements start, start + 1, ... of (counts, probs); returns the first element
 * not done (n when all are), the stream position in *p_io. */
int64_t binomial_tries(const double *counts, const double *probs, int64_t n, int64_t start,
                       int single, const double *u, int64_t avail, int64_t *p_io,
                       double *out) {
    for (int64_t i = start; i < n; i++) {
        const double count = counts[i], prob = probs[i];
        int ok = 1;
        double v;
        if (count <= 0.0 || prob <= 0.0) {
            v = 0.0;
        } else if (prob >= 1.0) {
            v = count;
        } else if (count != count && prob == prob) {
            v = NAN; /* (PyTorch's inversion waits forever for a sum above NaN) */
        } else if (prob <= 0.5) {
            v = bn_draw(count, prob, single, u, avail, p_io, &ok);
        } else if (prob > 0.5) {
            const double q = bn_round(1.0 - prob, single);
            v = bn_round(count - bn_draw(count, q, single, u, avail, p_io, &ok), single);
        } else {
            v = NAN;
        }
        if (!ok) return i;
        out[i] = v;
    }
    return n;
}

#endif
