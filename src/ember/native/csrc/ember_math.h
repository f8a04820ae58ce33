/* ember_math.h: exp, expm1, log, log1p, tanh, erf and sigmoid as static inline float and
 * double functions that GCC and Clang vectorise in a loop, without -ffast-math and with
 * -ffp-contract=off (ember's flags, toolchain.py); and erfinv for floats (it takes two
 * square roots: not claimed to vectorise).
 *
 * How: no libm call and no data-dependent branch. Each function is a range reduction made
 * of IEEE arithmetic and bit moves (memcpy between a float and an integer of its width),
 * a polynomial evaluated by Horner's rule, and special cases chosen with bit masks or
 * integer min / max (see `ember_pick` for why never with `c ? a : b` on computed values).
 * Checked to vectorise with GCC 12 for -march=native (AVX-512), haswell and znver3 (AVX2).
 * Integers are rounded with the
 * 1.5 * 2^(p-1) shifter (add, then read the integer from the low bits), so no
 * float-to-integer conversion instruction is needed (AVX2 has none for int64). erf reads
 * its per-interval coefficients from a table (a gather). No fma() is used anywhere: every
 * product and sum rounds on its own, so results are the same bits on every CPU (AVX2,
 * AVX-512, NEON or scalar) for the same compiler output.
 *
 * Accuracy, in units in the last place of the result (ulp), measured over millions of
 * inputs covering every exponent by tests/native/test_ember_math.py:
 *
 *   double:  exp <= 1, expm1 <= 1, log <= 1, log1p <= 2, erf <= 2, tanh <= 3,
 *            sigmoid <= 3   (1 / (1 + exp(-x)), as PyTorch computes it).
 *   float:   expf <= 1 (float arithmetic: the fast one, for softmax).
 *            logf, log1pf, expm1f, tanhf, erff and sigmoidf compute in double and round
 *            once: within 0.5 ulp + 2^-27 ulp, i.e. correctly rounded except when the
 *            double result lies within a few double ulps of a float tie. erfinvf too,
 *            its double result within about 1e-9 relative (see it).
 *
 * Edge behaviour is PyTorch's float32 / float64 CPU behaviour: NaN in, NaN out; exp
 * overflows to +inf at the same argument (float: 88.72283935546875, the first float whose
 * exact exp rounds past FLT_MAX) and gives subnormals down to the correctly rounded
 * underflow to +0; log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf; log1p(-1) = -inf;
 * expm1(-inf) = -1; tanh saturates to +-1 and erf(+-inf) = +-1; sigmoid(x) = 0 exactly
 * where exp(-x) overflows (float: x <= -88.72283935546875, so sigmoid(-100.0f) == 0, as
 * PyTorch's 1 / (1 + exp(-x)) gives) and 1 for large x; -0.0 is kept by expm1, log1p,
 * tanh and erf (exp(-0) = 1, sigmoid(-0) = 0.5).
 *
 * `ember_exp_t(x)` etc. pick the float or double function from the argument's type
 * (C11 _Generic), for kernels written once against scalar_t.
 *
 * Polynomial coefficients: tools/fit_ember_math.py (Chebyshev fits in 50 digits).
 */
#ifndef EMBER_MATH_H
#define EMBER_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t ember_bits_f(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float ember_float_of(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline uint64_t ember_bits_d(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double ember_double_of(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x with |x| held at most at `hi` (x >= 0) or `-lo` (x < 0), NaN kept: a minimum of bit
 * patterns (non-negative floats order as their bits), so no select the compiler could turn
 * into a branch (see below). */
static inline float ember_clampf(float x, float lo, float hi) {
    const uint32_t u = ember_bits_f(x), sign = u >> 31, a = u & 0x7fffffffu;
    const uint32_t lim = ember_bits_f(hi) + sign * (ember_bits_f(-lo) - ember_bits_f(hi));
    uint32_t c = a < lim ? a : lim;
    c |= ((uint32_t)0 - (uint32_t)(a > 0x7f800000u)) & 0x7fc00000u; /* NaN stays NaN */
    return ember_float_of(c | (sign << 31));
}

static inline double ember_clamp(double x, double lo, double hi) {
    const uint64_t u = ember_bits_d(x), sign = u >> 63, a = u & 0x7fffffffffffffffull;
    const uint64_t lim = ember_bits_d(hi) + sign * (ember_bits_d(-lo) - ember_bits_d(hi));
    uint64_t c = a < lim ? a : lim;
    c |= ((uint64_t)0 - (uint64_t)(a > 0x7ff0000000000000ull)) & 0x7ff8000000000000ull;
    return ember_double_of(c | (sign << 63));
}

/* Choosing without branches. GCC turns a source-level `c ? a : b` (and `&&`, `||`) into a
 * branch first; jump threading may then copy the code after it into both paths, and a
 * path holding floating-point arithmetic that may raise an exception (-ftrapping-math, the
 * default) is not turned back into a vector blend: the loop stays scalar. So this header
 * writes a choice only as a min / max of integers (the clamps above) or as a bit mask:
 * `ember_pick(c, a, b)` is c ? a : b for c in {0, 1} (a comparison's value), both computed. */
static inline double ember_pick(int c, double a, double b) {
    const uint64_t m = (uint64_t)0 - (uint64_t)c;
    return ember_double_of((ember_bits_d(a) & m) | (ember_bits_d(b) & ~m));
}

static inline float ember_pickf(int c, float a, float b) {
    const uint32_t m = (uint32_t)0 - (uint32_t)c;
    return ember_float_of((ember_bits_f(a) & m) | (ember_bits_f(b) & ~m));
}

/* --- coefficients (tools/fit_ember_math.py) ------------------------------------------ */

/* exp(r) = 1 + r + r^2 P(r) for |r| <= ln2/2; float fit error 6.5e-8 in P (r^2 P: 7.8e-9),
 * double fit error 1.4e-18 in P. */
static const float EMBER_EXPF_P[] = {0x1.000000p-1f, 0x1.5554dep-3f, 0x1.55551ap-5f,
                                     0x1.120b62p-7f, 0x1.6d10fcp-10f};
static const double EMBER_EXP_P[] = {
    0x1.0000000000000p-1, 0x1.5555555555557p-3, 0x1.5555555555556p-5, 0x1.11111111100dfp-7,
    0x1.6c16c16c162d6p-10, 0x1.a01a01abe62ddp-13, 0x1.a01a01a6d7808p-16, 0x1.71de02375656cp-19,
    0x1.27e4db67b4303p-22, 0x1.af4ddd84882fep-26, 0x1.1f72fc730b4ffp-29};

/* erf(x) / x = Q(x^2) for |x| < 1/2, fit error 2.4e-20; Q's constant term split in two. */
static const double EMBER_ERF_SMALL[] = {
    0x1.20dd750429b6dp+0, -0x1.812746b0379e6p-2, 0x1.ce2f21a042b29p-4, -0x1.b82ce3127f739p-6,
    0x1.565bcd0aa6349p-8, -0x1.c02db23d41138p-11, 0x1.f9a2a6635fe79p-14, -0x1.f4bb9f7301dedp-17,
    0x1.b776442df3041p-20, -0x1.39fb524e9c1f7p-23};
#define EMBER_TWO_OVER_SQRT_PI_LO 0x1.1ae3a914fed8p-56 /* 2/sqrt(pi) - ERF_SMALL[0] */

/* erf on [k/2, k/2 + 1/2), k = 1..11, around c = k/2 + 1/4 with h = x - c:
 * erf(x) = hi + (lo + h S(h)), erf(c) = hi + lo exactly enough, S of degree 13;
 * worst fit error of h S(h) 8.9e-19. Row 0 is unused (|x| < 1/2 takes Q). */
static const double EMBER_ERF_PIECE[12][16] = {
    {0},
    {0x1.6c1c9759d0e5fp-1, 0x1.b1432f2cbc455p-55, 0x1.492e42d78d2c5p-1, -0x1.edc5644353c27p-2, 0x1.b6e8591f668b1p-6, 0x1.349b5eaa145eap-3, -0x1.b42a1890a0eb8p-5, -0x1.b8477966dbf42p-6, 0x1.2e0afae9b530ep-6, 0x1.2db3337432936p-9, -0x1.04104485a7efbp-8, 0x1.8621f0de0d331p-13, 0x1.4713cff8b7184p-11, -0x1.bd1e9c7fe50afp-14, -0x1.372fab2a1ba55p-14, 0x1.675395e3bdbd7p-16},
    {0x1.d8865d98abe01p-1, -0x1.fcec4afb974d9p-55, 0x1.e4652fadcb6b2p-3, -0x1.2ebf3dcc9f22fp-2, 0x1.571d01c5c5760p-3, -0x1.93a9a7bb7f1c7p-8, -0x1.8281ce0b5d725p-5, 0x1.5d0003af8124bp-6, 0x1.db43ca6554e5ap-9, -0x1.75672d04e9910p-8, 0x1.cc21a7ad7d28ap-11, 0x1.a00773a339255p-11, -0x1.539192b8c3af5p-12, -0x1.ba9b344b2cf88p-15, 0x1.c8ae910f36d87p-15, -0x1.6dbb6aec33a68p-19},
    {0x1.f92d077f8d56dp-1, 0x1.8b55ef493fce7p-56, 0x1.b055303221016p-5, -0x1.7a4a8a2bdce13p-4, 0x1.7148c3d57c26ep-4, -0x1.8a0da54306143p-5, 0x1.b22257dda5c39p-8, 0x1.25b378c926554p-7, -0x1.8d10fba945f4bp-8, 0x1.7ec1d1f17005dp-11, 0x1.d4cf632c29957p-11, -0x1.d041f779426f0p-12, -0x1.717f97218bc12p-18, 0x1.200aed2ea315cp-14, -0x1.1d7248362f9a5p-16, -0x1.38d78c66b245ep-18},
    {0x1.ff404760319b4p-1, 0x1.f142071432025p-56, 0x1.d4143a9dfe964p-8, -0x1.074b60f8df349p-6, 0x1.63ef61e8244d0p-6, -0x1.38a98327890c5p-6, 0x1.5d3b17bbcb923p-7, -0x1.7cae0d45c2258p-9, -0x1.5f8313369b940p-11, 0x1.0602e347fbee3p-10, -0x1.8352faf51808cp-12, -0x1.80c24d48c8063p-17, 0x1.11430333dd2cep-14, -0x1.7c985a3b48a98p-16, -0x1.971515026dcb1p-20, 0x1.c65b166c63010p-19},
    {0x1.fff2cfb0453d9p-1, 0x1.9a913686042a3p-55, 0x1.3360ccd23db3ap-11, -0x1.a6a519a114d70p-10, 0x1.69cf466ccdf6ap-9, -0x1.ab0c273ac26ecp-9, 0x1.69359606645b3p-9, -0x1.b2755bfd5d9dbp-10, 0x1.52b6263fbd742p-11, -0x1.755772e5cf495p-14, -0x1.2abb3d9b15bc0p-14, 0x1.cd5952dfd66b0p-15, -0x1.09d0591ac5944p-16, -0x1.20104c843c482p-20, 0x1.68a9225d22a6dp-19, -0x1.de97da11a909fp-21},
    {0x1.ffff6f9f67e55p-1, 0x1.e1e4483ba034bp-55, 0x1.e9b5e8d00ce80p-16, -0x1.8de3cd290a7c1p-14, 0x1.9aa489e3ca63dp-13, -0x1.2c7d5ef053d4dp-12, 0x1.490a4d2345c9dp-12, -0x1.145464ea3ea46p-12, 0x1.647f71f2bfb67p-13, -0x1.567479a82ea0dp-14, 0x1.b2c35b1c8c428p-16, -0x1.3893fa844ef4dp-19, -0x1.809bd02211cc8p-19, 0x1.ff552dcb696bfp-20, -0x1.1e7cc89ce34dfp-21, -0x1.5a9cc83adb821p-29},
    {0x1.fffffc2f171e3p-1, 0x1.85edd0395f475p-55, 0x1.d9371e2ff7bf9p-21, -0x1.bba3ac4cf8470p-19, 0x1.0b6a7b0f1cc93p-17, -0x1.d06f58609413ep-17, 0x1.3436bc9f0bfd4p-16, -0x1.4357b55459e4dp-16, 0x1.110de4e13c93dp-16, -0x1.7566befdb0014p-17, 0x1.99f593d6ebea4p-18, -0x1.5d68f88f822cbp-19, 0x1.a06761d95439fp-21, -0x1.835421a5a833bp-24, -0x1.037beec04147dp-24, 0x1.70fe33beff00bp-25},
    {0x1.fffffff01a8b6p-1, 0x1.23370eca5ca6ap-60, 0x1.155a09065d4b8p-26, -0x1.26afa996c3232p-24, 0x1.95ea6fdffe3e1p-23, -0x1.96ba7366c1e94p-22, 0x1.3b468018fcb30p-21, -0x1.8868e1d18b0f7p-21, 0x1.916e9278424b6p-21, -0x1.566f02264ebcfp-21, 0x1.eab4cd71f6037p-22, -0x1.275891fcab90bp-22, 0x1.27de23e0bfae1p-23, -0x1.e0569906939e8p-25, 0x1.2496c69a00a91p-26, -0x1.8e903fcd79c1ap-29},
    {0x1.ffffffffd759dp-1, 0x1.f7bee7eb23420p-55, 0x1.8a61745ec8f20p-33, -0x1.d453ba308d59dp-31, 0x1.6a8aeba4080a2p-29, -0x1.9b017abbe490ap-28, 0x1.6b43c96e96861p-27, -0x1.042f2a6971f11p-26, 0x1.35dc7dedbca55p-26, -0x1.3834e3aec9615p-26, 0x1.0d4de0d7704f3p-26, -0x1.90aa80b288d06p-27, 0x1.01b972fdd330ap-27, -0x1.1ed6e9878149fp-28, 0x1.19bad55fa1f3bp-29, -0x1.bffd73223bb84p-31},
    {0x1.ffffffffffc05p-1, 0x1.07ba96a6b2e1ap-55, 0x1.5422ef5d93bf3p-40, -0x1.be6dda2ac53e3p-38, 0x1.7f8a0f3a22a32p-36, -0x1.e4cb4ae9a2e52p-35, 0x1.e044b4eb32629p-34, -0x1.83ea4bd5e0266p-33, 0x1.065940b2186f7p-32, -0x1.2ec544ec7ce54p-32, 0x1.2e3ca696517a6p-32, -0x1.07831523c117dp-32, 0x1.935d883f87f62p-33, -0x1.1176acf1145ccp-33, 0x1.5a5a77795b393p-34, -0x1.6a98a7d902e7fp-35},
    {0x1.ffffffffffffcp-1, 0x1.8115fd1b12786p-56, 0x1.63daf8b4f56dfp-48, -0x1.ff8ac583c84d4p-46, 0x1.e2d06d55f8efbp-44, -0x1.505d953256cb2p-42, 0x1.70b70451091d2p-41, -0x1.4aed68fbd911fp-40, 0x1.f3c4f7d4b2dfbp-40, -0x1.43c0fc7dd0662p-39, 0x1.6d26b2b537a5ep-39, -0x1.6a55415e480e7p-39, 0x1.3dc604ba24573p-39, -0x1.f4671b928c8edp-40, 0x1.7ec7f88c56bb2p-40, -0x1.de94f3adccf22p-41},
};

/* ln 2 split so that n * hi is exact for the n each reduction meets. */
#define EMBER_LN2F_HI 0x1.62ep-1f       /* 13 bits: n * hi exact for |n| < 2^11 */
#define EMBER_LN2F_LO 0x1.0bfbe8p-15f
#define EMBER_LN2_HI 0x1.62e42ffp-1     /* 29 bits: n * hi exact for |n| < 2^24 */
#define EMBER_LN2_LO -0x1.718432a1b0e26p-35
#define EMBER_LOG2E 0x1.71547652b82fep+0
#define EMBER_LOG2EF 0x1.715476p+0f
#define EMBER_SHIFT 0x1.8p52  /* x + SHIFT rounds x to an integer, read from the low bits */
#define EMBER_SHIFTF 0x1.8p23f

/* --- exp -------------------------------------------------------------------------------- */

/* e^x in float arithmetic, <= 1 ulp (subnormal results: <= 1 ulp of the subnormal).
 * x = n ln2 + r + rc, |r| <= ln2/2 (rc: r's rounding error); e^r = 1 + (r + (r^2 P(r) + rc));
 * the result 2^n e^r is scaled in two
 * exact steps 2^(n/2) then one rounding, so overflow and gradual underflow round once. */
static inline float ember_expf(float x) {
    /* x itself, unclamped: where n is out of range (|x| > 104) the result is garbage that
     * the last line replaces; NaN stays NaN throughout */
    const float k = x * EMBER_LOG2EF + EMBER_SHIFTF;
    const int32_t n = (int32_t)(ember_bits_f(k) - ember_bits_f(EMBER_SHIFTF));
    const float nf = k - EMBER_SHIFTF;
    const float r_hi = x - nf * EMBER_LN2F_HI; /* exact */
    const float lo = nf * EMBER_LN2F_LO;
    const float r = r_hi - lo;
    const float rc = (r_hi - r) - lo; /* the rounding error of r, kept */
    const float *c = EMBER_EXPF_P;
    const float p = c[0] + r * (c[1] + r * (c[2] + r * (c[3] + r * c[4])));
    const float er = 1.0f + (r + ((r * r) * p + rc));
    const int32_t n1 = n >> 1, n2 = n - n1;
    const float s1 = ember_float_of((uint32_t)(n1 + 127) << 23);
    const float s2 = ember_float_of((uint32_t)(n2 + 127) << 23);
    /* e^x overflows from the float after 88.72283172607422 (a correctly rounded exp's
     * threshold) and rounds to +0 below -103.97; n stays in range down to -104 */
    return ember_pickf(x > 0x1.62e42ep+6f, INFINITY,
                       ember_pickf(x < -104.0f, 0.0f, (er * s1) * s2));
}

/* e^r - 1 - r for |r| <= ln2/2 (double). */
static inline double ember_exp_tail(double r) {
    const double *c = EMBER_EXP_P;
    double p = c[10];
    for (int i = 9; i >= 0; i--) p = c[i] + r * p;
    return (r * r) * p;
}

/* x = n ln2 + r in double: n as an integer and a double, r rounded once. */
#define EMBER_REDUCE_D(xc, n, nf, r)                                                       \
    const double k_ = (xc) * EMBER_LOG2E + EMBER_SHIFT;                                   \
    const int64_t n = (int64_t)(ember_bits_d(k_) - ember_bits_d(EMBER_SHIFT));              \
    const double nf = k_ - EMBER_SHIFT;                                                    \
    const double r##_hi = (xc) - nf * EMBER_LN2_HI;                                        \
    const double r = r##_hi - nf * EMBER_LN2_LO

/* e^x in double, <= 1 ulp; as ember_expf with a degree-12 polynomial. */
static inline double ember_exp(double x) {
    const double xc = ember_clamp(x, -746.0, 710.0);
    EMBER_REDUCE_D(xc, n, nf, r);
    (void)r_hi;
    const double er = 1.0 + (r + ember_exp_tail(r));
    const int64_t n1 = n >> 1, n2 = n - n1;
    const double s1 = ember_double_of((uint64_t)(n1 + 1023) << 52);
    const double s2 = ember_double_of((uint64_t)(n2 + 1023) << 52);
    return (er * s1) * s2;
}

/* --- expm1 ------------------------------------------------------------------------------ */

/* e^x - 1 in double, <= 1 ulp. |x| <= 40: x = n ln2 + (r + rc) with the reduction's
 * rounding error rc kept, e^(r + rc) - 1 = m_hi + m_lo (a two-term sum), and
 * 2^n (1 + m) - 1 summed with exact error terms so that only the last addition rounds.
 * x > 40: e^x (the -1 is below half an ulp); x < -40: -1. */
static inline double ember_expm1(double x) {
    const double xc = ember_clamp(x, -40.0, 40.0);
    EMBER_REDUCE_D(xc, n, nf, r);
    const double rc = (r_hi - r) - nf * EMBER_LN2_LO; /* r + rc = r_hi - nf lo, better */
    const double q = ember_exp_tail(r) + rc * (1.0 + r);
    const double m_hi = r + q; /* |q| < |r| or r = 0: the error below is exact */
    const double m_lo = (r - m_hi) + q;
    const double t = ember_double_of((uint64_t)(n + 1023) << 52);
    /* t m_hi + t, exactly as s1 + e1 (|t| >= |t m_hi|) */
    const double a = t * m_hi;
    const double s1 = t + a;
    const double e1 = (t - s1) + a;
    /* s1 - 1, exactly as s2 + e2 (two-sum: either may be larger) */
    const double s2 = s1 - 1.0;
    const double bb = s2 - s1;
    const double e2 = (s1 - (s2 - bb)) + (-1.0 - bb);
    const double core = s2 + (e1 + e2 + t * m_lo); /* (n = 0 too: then exactly m_hi) */
    const double out = ember_pick(x > 40.0, ember_exp(x), core);
    return copysign(out, x); /* expm1 has x's sign: keeps -0.0 */
}

/* --- log, log1p ------------------------------------------------------------------------- */

/* log(x) in double, <= 1 ulp. x = 2^e m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled
 * by 2^54 first), f = m - 1 (exact), s = f / (2 + f): log(m) = 2 atanh(s) = 2s + s R(s^2),
 * R's coefficients 2/(2k+1) (its series, cut after s^20: 6e-19 relative), and 2s written as
 * f - f^2/2 + s f^2/2 so that log(m) = f - (f^2/2 - s (f^2/2 + R)), added to e ln2 last. */
static inline double ember_log(double x) {
    const int tiny = x < 0x1p-1022;
    const double xs = x * ember_pick(tiny, 0x1p54, 1.0);
    const uint64_t centre = 0x3fe6a09e667f3bcdull; /* sqrt(1/2) */
    const uint64_t ix = ember_bits_d(xs) + (0x3ff0000000000000ull - centre);
    /* the biased exponent as a double through the shifter (AVX2 has no int64 -> double) */
    const double eb = ember_double_of(ember_bits_d(EMBER_SHIFT) | (ix >> 52)) - EMBER_SHIFT;
    const double e = (eb - 1023.0) - ember_pick(tiny, 54.0, 0.0);
    const double m = ember_double_of((ix & 0x000fffffffffffffull) + centre);
    const double f = m - 1.0;
    const double s = f / (2.0 + f);
    const double z = s * s;
    double R = 2.0 / 21.0;
    R = 2.0 / 19.0 + z * R;
    R = 2.0 / 17.0 + z * R;
    R = 2.0 / 15.0 + z * R;
    R = 2.0 / 13.0 + z * R;
    R = 2.0 / 11.0 + z * R;
    R = 2.0 / 9.0 + z * R;
    R = 2.0 / 7.0 + z * R;
    R = 2.0 / 5.0 + z * R;
    R = 2.0 / 3.0 + z * R;
    R = z * R;
    const double hfsq = 0.5 * (f * f);
    const double lm = f - (hfsq - (s * (hfsq + R) + e * EMBER_LN2_LO));
    /* out is finite for every x; x <= 0, +inf and NaN add -inf, NaN, +inf or NaN to it */
    const double special = ember_pick(x == 0.0, -INFINITY, ember_pick(x < 0.0, NAN, x));
    const double add = ember_pick((x > 0.0) & (x < INFINITY), 0.0, special);
    return (e * EMBER_LN2_HI + lm) + add;
}

/* log(1 + x) in double, <= 2 ulp: u = 1 + x rounded, log(u) plus the first-order
 * correction (x - (u - 1)) / u for the rounding of u (exact to compute). */
static inline double ember_log1p(double x) {
    const double u = 1.0 + x;
    /* the correction from x and u, or from 0 and 1 (giving 0) where u is 0, inf or NaN */
    const int ok = (u > 0.0) & (u < INFINITY);
    const double xs = ember_pick(ok, x, 0.0), us = ember_pick(ok, u, 1.0);
    const double corr = (xs - (us - 1.0)) / us;
    return copysign(ember_log(u) + corr, x); /* log1p has x's sign: keeps -0.0 */
}

/* --- tanh, erf, sigmoid ----------------------------------------------------------------- */

/* tanh(x) in double, <= 3 ulp: m = expm1(2|x|), tanh|x| = m / (m + 2), the sign copied;
 * |x| is held at 20 (tanh(20) rounds to 1). */
static inline double ember_tanh(double x) {
    const double a = ember_clamp(fabs(x), -20.0, 20.0);
    const double m = ember_expm1(a + a);
    return copysign(m / (m + 2.0), x);
}

/* erf(x) in double, <= 2 ulp. |x| < 1/2: x Q(x^2) with Q's constant in two parts;
 * 1/2 <= |x| < 6: the interval's polynomial around its centre (table row k = floor(2|x|));
 * |x| >= 6: +-1 (1 - erf(6) is 2e-17, below half an ulp of 1). */
static inline double ember_erf(double x) {
    const double a = fabs(x);
    const int is_small = a < 0.5;
    const double xs = ember_pick(is_small, a, 0.0); /* each part on an input it takes */
    const double z = xs * xs;
    const double *q = EMBER_ERF_SMALL;
    double p = q[9];
    for (int i = 8; i >= 1; i--) p = q[i] + z * p;
    const double small = xs * q[0] + xs * (EMBER_TWO_OVER_SQRT_PI_LO + z * p);
    /* the row's argument in [1/2, 6], NaN and inf held at 6 (NaN comes back below) */
    const uint64_t ua = ember_bits_d(a), u6 = ember_bits_d(6.0), uh = ember_bits_d(0.5);
    uint64_t ub = ua < u6 ? ua : u6;
    ub = ub > uh ? ub : uh;
    const double ab = ember_double_of(ub);
    int k = (int)(ab + ab); /* 1 .. 12 */
    k = k < 11 ? k : 11;
    const double *t = &EMBER_ERF_PIECE[0][0];
    const int at = k * 16; /* a flat index: a gather's scale must be 1, 2, 4 or 8 bytes */
    const double h = ab - ((double)k * 0.5 + 0.25);
    double s = t[at + 15];
    s = t[at + 14] + h * s;
    s = t[at + 13] + h * s;
    s = t[at + 12] + h * s;
    s = t[at + 11] + h * s;
    s = t[at + 10] + h * s;
    s = t[at + 9] + h * s;
    s = t[at + 8] + h * s;
    s = t[at + 7] + h * s;
    s = t[at + 6] + h * s;
    s = t[at + 5] + h * s;
    s = t[at + 4] + h * s;
    s = t[at + 3] + h * s;
    s = t[at + 2] + h * s;
    const double big = t[at] + (t[at + 1] + h * s);
    /* |x| < 1/2: small; 1/2 <= |x| < 6: big; |x| >= 6: 1; NaN: NaN */
    const double out = ember_pick(is_small, small, ember_pick(a < 6.0, big, 1.0));
    return copysign(ember_pick(x != x, x, out), x);
}

/* erfinv of a float, in double and rounded once: Winitzki's closed form (within 2e-3),
 * then three Halley steps on erf(x) = |y| (2e-3 -> 1e-8 -> below double's precision).
 * The residual erf(x) - |y| is a difference of two numbers near 1 in the tails, which
 * costs a double about 2e-16 absolutely: 3e-10 of x where a float's |y| is nearest 1
 * (1 - 2^-24), far below a float's half ulp, so this is for float inputs only (a double's
 * tail needs erfc). |y| = 1: +-inf; |y| > 1 or NaN: NaN; -0 stays -0. */
static inline double ember_erfinv_step(double x, double a) { /* Halley on erf(x) = a */
    const double r = ember_erf(x) - a;
    const double step = r / (1.1283791670955126 * ember_exp(-x * x)); /* 2/sqrt(pi) */
    return x - step / (1.0 + x * step);
}

static inline float ember_erfinvf(float yf) {
    const double y = (double)yf, ay = fabs(y);
    const int inside = ay < 1.0;
    const double a = ember_pick(inside, ay, 0.0); /* (each step on an input it takes) */
    const double ln = ember_log((1.0 - a) * (1.0 + a));
    const double t = 4.330746750799873 + 0.5 * ln; /* 2 / (pi 0.147) + ln / 2 */
    double x = sqrt(sqrt(t * t - ln / 0.147) - t);
    x = ember_erfinv_step(x, a); /* (written out: a loop here would not vectorise) */
    x = ember_erfinv_step(x, a);
    x = ember_erfinv_step(x, a);
    const double out = ember_pick(inside, x, ember_pick(ay == 1.0, INFINITY, NAN));
    return (float)copysign(out, y);
}

/* 1 / (1 + e^-x) in double, <= 3 ulp; 0 where e^-x overflows (x < -709.78), as PyTorch. */
static inline double ember_sigmoid(double x) { return 1.0 / (1.0 + ember_exp(-x)); }

/* --- float through double --------------------------------------------------------------- */

static inline float ember_logf(float x) { return (float)ember_log((double)x); }
static inline float ember_log1pf(float x) { return (float)ember_log1p((double)x); }
static inline float ember_expm1f(float x) { return (float)ember_expm1((double)x); }
static inline float ember_tanhf(float x) { return (float)ember_tanh((double)x); }
static inline float ember_erff(float x) { return (float)ember_erf((double)x); }

/* sigmoid in float as PyTorch's float32 1 / (1 + exp(-x)) behaves at the edges: exactly 0
 * where float exp(-x) overflows (x <= -0x1.62e43p+6 = -88.72283935546875), elsewhere the
 * double value rounded once (PyTorch's float arithmetic may differ by an ulp). */
static inline float ember_sigmoidf(float x) {
    return ember_pickf(x <= -0x1.62e43p+6f, 0.0f, (float)ember_sigmoid((double)x));
}

#define EMBER_GENERIC(name, x) _Generic((x), float: name##f, default: name)(x)
#define ember_exp_t(x) EMBER_GENERIC(ember_exp, x)
#define ember_expm1_t(x) EMBER_GENERIC(ember_expm1, x)
#define ember_log_t(x) EMBER_GENERIC(ember_log, x)
#define ember_log1p_t(x) EMBER_GENERIC(ember_log1p, x)
#define ember_tanh_t(x) EMBER_GENERIC(ember_tanh, x)
#define ember_erf_t(x) EMBER_GENERIC(ember_erf, x)
#define ember_sigmoid_t(x) EMBER_GENERIC(ember_sigmoid, x)

#endif
