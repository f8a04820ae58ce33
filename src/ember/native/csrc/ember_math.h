/* ember_math.h: exp, expm1, log, log1p, tanh, erf, erfc and sigmoid as static inline float and
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
 *   double:  exp <= 1, expm1 <= 1, log <= 1, log1p <= 2, erf <= 2, erfc <= 4 (relative to
 *            erfc itself down to its underflow), tanh <= 3,
 *            sigmoid <= 3   (1 / (1 + exp(-x)), as PyTorch computes it).
 *   float:   expf <= 1 (float arithmetic: the fast one, for softmax).
 *            logf, log1pf, expm1f, tanhf, erff, erfcf and sigmoidf compute in double and round
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

/* erfcx(x) = e^(x^2) erfc(x) on [k/2, k/2 + 1/2), k = 1..54 (erfc underflows past 27.3), a
 * polynomial of degree 13 in h = x - c around c = k/2 + 1/4; worst relative fit error
 * 5.4e-18. Row 0 is unused (|x| < 1/2 takes erf's Q). */
static const double EMBER_ERFCX_PIECE[55][14] = {{0},
    {0x1.038d54ea3d834p-1, -0x1.78cdd551ee51ap-2, 0x1.d90093ae108b0p-3, -0x1.09e77d40e0214p-3, 0x1.1192f5bd775ccp-4, -0x1.054d68296477dp-5, 0x1.d43a7c4dbe650p-7, -0x1.8c97dd32ae0e1p-8, 0x1.3f81a9597de0ap-9, -0x1.ec0d1ccb09b6fp-11, 0x1.6b80da7254f0fp-12, -0x1.02a2c5796f3cap-13, 0x1.6be408e744acbp-15, -0x1.e34f70587b39ap-17},
    {0x1.78a692138767ap-2, -0x1.abaacdbfa8b07p-3, 0x1.b56f45eef7e3fp-4, -0x1.9b635ac624ac6p-5, 0x1.68a25a664836fp-6, -0x1.299636d6c9209p-7, 0x1.d1b69597f0c3dp-9, -0x1.5b8bc9419d840p-10, 0x1.f0fe8a88d3cd7p-12, -0x1.55c08c80d2503p-13, 0x1.c55c924775cc5p-15, -0x1.22f10017ec710p-16, 0x1.71368494f04cfp-18, -0x1.bde45264f2361p-20},
    {0x1.23cfc2f1dc7e0p-2, -0x1.0c3d538446447p-3, 0x1.c8d0cef0f8107p-5, -0x1.6cb52fe48945cp-6, 0x1.13648a12017fcp-7, -0x1.8bf716a8ec6bep-9, 0x1.106bd5bb7a2eep-10, -0x1.68388845b02b1p-12, 0x1.cb4c7627a9281p-14, -0x1.1b2919f9d4442p-15, 0x1.5269f21f31c3cp-17, -0x1.88f0ad9976924p-19, 0x1.c3515d18ecf45p-21, -0x1.f0bcbed45e35cp-23},
    {0x1.d94446d627932p-3, -0x1.6a70d2bb37411p-4, 0x1.0615670e25a7ap-5, -0x1.6883f9919a179p-7, 0x1.da595561f8c9ep-9, -0x1.2bd251bb2f799p-10, 0x1.6d7743d0ced6cp-12, -0x1.aed7ebc6d4759p-14, 0x1.ec774509181bap-16, -0x1.117a6a5f5a9a8p-17, 0x1.27a9379f9d083p-19, -0x1.37b3d0ebc0d92p-21, 0x1.4549d09bbbc55p-23, -0x1.47399628bd723p-25},
    {0x1.8c9eb68ff27d7p-3, -0x1.0305781330099p-4, 0x1.43b98bac83823p-6, -0x1.84e9ab30e6ab3p-8, 0x1.c2c72fd727ba9p-10, -0x1.f99e41ecb0dd4p-12, 0x1.131bb1602174ep-13, -0x1.2312b2588053ep-15, 0x1.2bfb5df4d61e0p-17, -0x1.2da32c584b240p-19, 0x1.2852bb5b7ada2p-21, -0x1.1ccbd4b77374fp-23, 0x1.0f2b20b252eb3p-25, -0x1.f44283867051ep-28},
    {0x1.54a7a08d4bb45p-3, -0x1.82a8522b868a1p-5, 0x1.a7eddc9ee6425p-7, -0x1.c24b49c47a2c4p-9, 0x1.d085857a18160p-11, -0x1.d25ebba1c4adbp-13, 0x1.c882f022b048ep-15, -0x1.b45d025ef6bddp-17, 0x1.97dd7b2c0b6fep-19, -0x1.753cad42615a6p-21, 0x1.4ebd276370be6p-23, -0x1.26896dce8ab58p-25, 0x1.00f7472e0f6ddp-27, -0x1.b436b65151e5dp-30},
    {0x1.2a2af19c14930p-3, -0x1.2aa6503acda11p-5, 0x1.22f0664f3cbf9p-7, -0x1.1434ae05873abp-9, 0x1.fff032a0df986p-12, -0x1.cfcdea1b1f611p-14, 0x1.9b50d0d2021e5p-16, -0x1.65778aacf12bdp-18, 0x1.30c2fc4e7a197p-20, -0x1.fe3e344fe3890p-23, 0x1.a3bbca0e4ff01p-25, -0x1.5392b50a5f4dep-27, 0x1.109d8f70540dbp-29, -0x1.ab5f530764396p-32},
    {0x1.08e62ce8c89adp-3, -0x1.da39533524970p-6, 0x1.9ef71691a5520p-8, -0x1.6373226edf541p-10, 0x1.2a660fdec0495p-12, -0x1.eb88e0e8f3bdcp-15, 0x1.8d8e597518b67p-17, -0x1.3c07763845fdbp-19, 0x1.ee335fdbae782p-22, -0x1.7c568dfec1d3ap-24, 0x1.204958c65314ap-26, -0x1.aeb1ec74ba14ap-29, 0x1.3f80c08b45184p-31, -0x1.d039a2099384cp-34},
    {0x1.dc603a3e77e9bp-4, -0x1.81149bc4a104bp-6, 0x1.317c144f8b419p-8, -0x1.dc1af883a33c8p-11, 0x1.6cc10c16255c7p-13, -0x1.12f1743bc5a3ep-15, 0x1.9818c0a1ac928p-18, -0x1.2a625a21e970dp-20, 0x1.ae1fad62b17f2p-23, -0x1.31c3e0a55f2dep-25, 0x1.acf8546bd6cbbp-28, -0x1.2912a585ea566p-30, 0x1.98e75bcd72b7fp-33, -0x1.144c130eb3bb0p-35},
    {0x1.b096face146fep-4, -0x1.3e981b3b13590p-6, 0x1.cdeae21161624p-9, -0x1.49d492a39eb5fp-11, 0x1.d03e19aa1138fp-14, -0x1.4230e3ccf879cp-16, 0x1.b93f4735bbb98p-19, -0x1.2a4352eaa1f0cp-21, 0x1.8e37536999c4ap-24, -0x1.06a3adcfae9b6p-26, 0x1.566888f6fb656p-29, -0x1.b9605917b7630p-32, 0x1.1ae23ca1ac5cap-34, -0x1.64c876ec26343p-37},
    {0x1.8c14049cd551ep-4, -0x1.0bc46cdc18fe6p-6, 0x1.6535040e2c85ap-9, -0x1.d662fda6d50f5p-12, 0x1.31dddbe4362a6p-14, -0x1.8900e0bd28f36p-17, 0x1.f31a325aafe2ep-20, -0x1.395be06d3a7cdp-22, 0x1.8530fe28d4412p-25, -0x1.de425469e9f61p-28, 0x1.22d48e49bd82dp-30, -0x1.5e2c9a39b7a7dp-33, 0x1.a380c61bbf130p-36, -0x1.ef65a189c885dp-39},
    {0x1.6d2f811bf7397p-4, -0x1.c82c132848f67p-7, 0x1.19a2448fc71d8p-9, -0x1.57e0ab4d7cb1bp-12, 0x1.9f57d767b656ep-15, -0x1.f067807239679p-18, 0x1.259fcb450c4b1p-20, -0x1.57ec19f0933f3p-23, 0x1.8ef5703afcaa9p-26, -0x1.ca76ccc72f38bp-29, 0x1.0503881c7eb84p-31, -0x1.268e4394c3201p-34, 0x1.4ae588c60cea2p-37, -0x1.6f00663ca577bp-40},
    {0x1.52b80d463c470p-4, -0x1.8914e8736d77dp-7, 0x1.c39a4935fa76ap-10, -0x1.00e4e3d2d8508p-12, 0x1.21808c22d6ed0p-15, -0x1.433e288b7f431p-18, 0x1.65acd3c2f3aecp-21, -0x1.884f46c916b4ep-24, 0x1.aa9f00b32f5dbp-27, -0x1.cc0fe7e32c7f9p-30, 0x1.ec138cbcdc7ffp-33, -0x1.05100911fa6a9p-35, 0x1.13dd8aae1f8f3p-38, -0x1.2031f0644086bp-41},
    {0x1.3bcc59a28358cp-4, -0x1.5621e47157306p-7, 0x1.6f68a6f3153a2p-10, -0x1.872cdb81fdf3fp-13, 0x1.9d0000a8e2a25p-16, -0x1.b07c4a7e74e41p-19, 0x1.c147c330b78a5p-22, -0x1.cf16f8bc531cbp-25, 0x1.d9af1c78bd1b2p-28, -0x1.e0e780591fd99p-31, 0x1.e4a9dbbce0a13p-34, -0x1.e4f4a31caf34dp-37, 0x1.e37035b634196p-40, -0x1.dd00f9b102f24p-43},
    {0x1.27c2b4d2f8988p-4, -0x1.2c6aebe4718c2p-7, 0x1.2ec8136aa630fp-10, -0x1.2ed983856cc8bp-13, 0x1.2cab802c99cffp-16, -0x1.285655d260bb9p-19, 0x1.21fd16110151dp-22, -0x1.19cc0822c162cp-25, 0x1.0ff6e2ff3aa18p-28, -0x1.04b6e76d51dd6p-31, 0x1.f0916db0891cdp-35, -0x1.d5d6b3898e8ccp-38, 0x1.bb0a6b7125cffp-41, -0x1.9debaaaa313c2p-44},
    {0x1.1618fbc75f8a0p-4, -0x1.09d8af47983fcp-7, 0x1.f8c382c54421dp-11, -0x1.dbf548a05f704p-14, 0x1.bdd1fbfc36c12p-17, -0x1.9edfad3a4c1cap-20, 0x1.7f9c1cacaf8fdp-23, -0x1.607a42df4df58p-26, 0x1.41e07b6eed037p-29, -0x1.24274fe60d740p-32, 0x1.0798a858496f3p-35, -0x1.d8e1063440348p-39, 0x1.a6d97fa7008aep-42, -0x1.76f4a9e7b0b77p-45},
    {0x1.0669c59166c17p-4, -0x1.d9c4ed21533b0p-8, 0x1.a909f1969e99dp-11, -0x1.7b022618f5caap-14, 0x1.4ff2fd6a38864p-17, -0x1.2809b1473260bp-20, 0x1.035da05cc8b62p-23, -0x1.c3e5fbac5a5b4p-27, 0x1.877b575883233p-30, -0x1.51483b5997777p-33, 0x1.210425bcc9d89p-36, -0x1.ecae5fe1dac32p-40, 0x1.a2bee00926977p-43, -0x1.6133e87b0318ap-46},
    {0x1.f0c9d48847e15p-5, -0x1.a8c62560288bbp-8, 0x1.692e54463ff4fp-11, -0x1.316dfd27c4159p-14, 0x1.00e4f208a77ecp-17, -0x1.addaa926e2338p-21, 0x1.65c15fb21e863p-24, -0x1.28382dc7e53bdp-27, 0x1.e80d5866c2425p-31, -0x1.900d30160d898p-34, 0x1.464de0c1ace28p-37, -0x1.08dc6d4532294p-40, 0x1.acdc5e02962cbp-44, -0x1.58cc448efb8d5p-47},
    {0x1.d7947dc6e8dafp-5, -0x1.7ef85ef3d1684p-8, 0x1.3572837068f82p-11, -0x1.f19a40f07df56p-15, 0x1.8e20f7770da5ep-18, -0x1.3d01ef23bb85ap-21, 0x1.f66f55ead9879p-25, -0x1.8c4c65cd8a225p-28, 0x1.37239d88fb731p-31, -0x1.e655176fbd2bdp-35, 0x1.7a602b4b418e7p-38, -0x1.25139b067ececp-41, 0x1.c4ee9192c7ab8p-45, -0x1.5bc4c57bb6a04p-48},
    {0x1.c0cb9b2935b92p-5, -0x1.5b059dc34c3d5p-8, 0x1.0b1a41bf02a49p-11, -0x1.99532cdaf37ccp-15, 0x1.383e40afaa289p-18, -0x1.da48652d18260p-22, 0x1.66a54fcbc7e4dp-25, -0x1.0e0ac7fffd0cdp-28, 0x1.94eff17cd97d0p-32, -0x1.2e574195c3d42p-35, 0x1.c19d30b6e985cp-39, -0x1.4cf33db5c1227p-42, 0x1.ec08448f0173ep-46, -0x1.69716142b091bp-49},
    {0x1.ac1a2600f9687p-5, -0x1.3be37b8224a8dp-8, 0x1.d03c050c12cafp-12, -0x1.53b80a02ad7abp-15, 0x1.ef2de61e6b870p-19, -0x1.6770ae0c3f325p-22, 0x1.03dfafd48ce05p-25, -0x1.764cd33baf23fp-29, 0x1.0c823d1022fd7p-32, -0x1.7fc1e8ef75398p-36, 0x1.1131f9f3f6ecfp-39, -0x1.838350b48ea8cp-43, 0x1.12468240cc6cap-46, -0x1.822bcd6200f8ep-50},
    {0x1.9939e4f6ef547p-5, -0x1.20c006896f723p-8, 0x1.95ede2d54de93p-12, -0x1.1c4103d18e178p-15, 0x1.8c9d5da786081p-19, -0x1.13ac64c0c52a5p-22, 0x1.7dd2a96820aeep-26, -0x1.0777a9a696f07p-29, 0x1.6a4c5abd614bbp-33, -0x1.f070698086528p-37, 0x1.52ee5f43ba045p-40, -0x1.cd3060d0ebe08p-44, 0x1.392efd88eab5cp-47, -0x1.a73e33240fec9p-51},
    {0x1.87f0587e0b6b4p-5, -0x1.08f40799540edp-8, 0x1.64f6aa6bfabe0p-12, -0x1.df41a15a9cdd1p-16, 0x1.409dfb5be2e94p-19, -0x1.ab84d587eae73p-23, 0x1.1c126cadbbdcbp-26, -0x1.7840d81b46115p-30, 0x1.f0b37e6f1299bp-34, -0x1.46c7eb0598fbep-37, 0x1.ac9608c1b4da1p-41, -0x1.1826d0b324ef7p-44, 0x1.6d9c6baf21d77p-48, -0x1.daf29b5037d18p-52},
    {0x1.780c6345b4de9p-5, -0x1.e7f2059678dd5p-9, 0x1.3b8b7f402a8ebp-12, -0x1.96ce3ebd3b987p-16, 0x1.0565cdd23b80cp-19, -0x1.4edf1d767f0f0p-23, 0x1.aba91680bdb4fp-27, -0x1.103c9ad8d3466p-30, 0x1.59892c985cc32p-34, -0x1.b53d7d8feb1aep-38, 0x1.13cf323f440e4p-41, -0x1.5aec0904a46d3p-45, 0x1.b3a9290aa5e79p-49, -0x1.1061d1407a2d5p-52},
    {0x1.69647c7510299p-5, -0x1.c2c3adc1ab710p-9, 0x1.1846ff5dc5bbcp-12, -0x1.5b82416819eafp-16, 0x1.ad999f688a472p-20, -0x1.08c479c258750p-23, 0x1.456a39cce2126p-27, -0x1.8ecec57382835p-31, 0x1.e75d1d36bed5ep-35, -0x1.28f3cc194956fp-38, 0x1.68db2308ac62dp-42, -0x1.b54bb22f8a0f5p-46, 0x1.088fee9542419p-49, -0x1.3ed8e8995cf00p-53},
    {0x1.5bd54832ed9c3p-5, -0x1.a1aa73f9e2f99p-9, 0x1.f42027fda580cp-13, -0x1.2a9b9e9ca3a4bp-16, 0x1.639a528d9dfd1p-20, -0x1.a654195852dc9p-24, 0x1.f439dad31f6dbp-28, -0x1.27749711d470cp-31, 0x1.5c1813b3a7613p-35, -0x1.99089ccfdd7a4p-39, 0x1.df6380e8ff4bdp-43, -0x1.18322c5edf780p-46, 0x1.4713d3d66e5e1p-50, -0x1.7c6389917723cp-54},
    {0x1.4f407d0aad072p-5, -0x1.84131dfa095a4p-9, 0x1.c00f47ccfd902p-13, -0x1.01fec1f52625bp-16, 0x1.285a9be8ffd58p-20, -0x1.538e6390ea7a4p-24, 0x1.8414c8277177dp-28, -0x1.ba6fdfb8457e4p-32, 0x1.f728f94644365p-36, -0x1.1d682abc2c1bep-39, 0x1.42fe58265d4e0p-43, -0x1.6ca5862d2b323p-47, 0x1.9b2015b930f7fp-51, -0x1.cdec63be05178p-55},
    {0x1.438c03b54316dp-5, -0x1.69836d73ecf92p-9, 0x1.92f63a0408f07p-13, -0x1.c016858e0201ep-17, 0x1.f11588c793619p-21, -0x1.13118c0d5964bp-24, 0x1.2fb68d4cb108bp-28, -0x1.4e8f7cdec668cp-32, 0x1.6fb0859293abep-36, -0x1.932bfad163068p-40, 0x1.b911fdfe26378p-44, -0x1.e1705c47c8364p-48, 0x1.066c9fda9debbp-51, -0x1.1d2888135de94p-55},
    {0x1.38a143b28d6d4p-5, -0x1.5195371eac394p-9, 0x1.6bb4e246a87c5p-13, -0x1.86f9ae5b446bdp-17, 0x1.a35ac542b4716p-21, -0x1.c0cd00b5a155bp-25, 0x1.df42de6be7706p-29, -0x1.feac79c2468fap-33, 0x1.0f7bc59a197c0p-36, -0x1.2007b6f80a052p-40, 0x1.30ee8ed475102p-44, -0x1.4223c05fe3b7ep-48, 0x1.53ebb57190c0dp-52, -0x1.659769a7687adp-56},
    {0x1.2e6c929b52165p-5, -0x1.3bf2903ef31b1p-9, 0x1.49611f5260891p-13, -0x1.56a9984a10431p-17, 0x1.63bd15e484914p-21, -0x1.708c91b3f6a54p-25, 0x1.7d0901a9d3eafp-29, -0x1.892376502fcc9p-33, 0x1.94cd3959f5f3cp-37, -0x1.9ff7ec2dae279p-41, 0x1.aa959d616a41cp-45, -0x1.b49908db2ffcdp-49, 0x1.be5ac59dfa029p-53, -0x1.c705fe7468010p-57},
    {0x1.24dcbe974e1ebp-5, -0x1.2852ce71a1307p-9, 0x1.2b3b5f7373065p-13, -0x1.2d92fd52a4220p-17, 0x1.2f570b0cba6dfp-21, -0x1.3085c73ea580ep-25, 0x1.311e4e5a8105ap-29, -0x1.31209abaff72ap-33, 0x1.308d829b9f9d7p-37, -0x1.2f66b4022f62fp-41, 0x1.2daea93f9a3bbp-45, -0x1.2b68b6df2d460p-49, 0x1.28d83ed337d52p-53, -0x1.258252cd386d6p-57},
    {0x1.1be2ae3770965p-5, -0x1.167827b6bc40bp-9, 0x1.10a5e1d964a49p-13, -0x1.0a74394c06602p-17, 0x1.03ebd41715729p-21, -0x1.fa2b1d43ac9f9p-26, 0x1.ebf4d1cfdbb34p-30, -0x1.dd46e82991192p-34, 0x1.ce33816960cf4p-38, -0x1.becc9b4c93bb1p-42, 0x1.af23e902c6748p-46, -0x1.9f4ad0e671e2ep-50, 0x1.8fa28cd449a00p-54, -0x1.7f9713c15deebp-58},
    {0x1.1371114dabe51p-5, -0x1.062dcdb385fabp-9, 0x1.f23beb7745436p-14, -0x1.d895eeca4c962p-18, 0x1.bf7abdbe8b1b2p-22, -0x1.a6f9a9212f163p-26, 0x1.8f203a99eff95p-30, -0x1.77fa3926d126dp-34, 0x1.6191b153719eap-38, -0x1.4bef00d0619b6p-42, 0x1.3718e09e19121p-46, -0x1.2314885c5f1e3p-50, 0x1.10195375dbd78p-54, -0x1.fb7d1e2c7a167p-59},
    {0x1.0b7c1f5caec3ep-5, -0x1.ee8cd0f52eaaap-10, 0x1.c86d710737bc9p-14, -0x1.a48cbb99b789ap-18, 0x1.82db62beee190p-22, -0x1.634874bf8914cp-26, 0x1.45c1a024c4dbep-30, -0x1.2a33748a8692cp-34, 0x1.10899fdb10f0dp-38, -0x1.f15e4f5305785p-43, 0x1.c51d3725168fdp-47, -0x1.9c24a4341f323p-51, 0x1.768c4769b546cp-55, -0x1.539bc462f8a63p-59},
    {0x1.03f960fac1b3cp-5, -0x1.d335b7eb4dad2p-10, 0x1.a329ec793b6f3p-14, -0x1.77790ddfd3d34p-18, 0x1.4fd08a76386afp-22, -0x1.2be1b512183ddp-26, 0x1.0b61dcb72cc94p-30, -0x1.dc14b1a608048p-35, 0x1.a731168a54e63p-39, -0x1.779bb2d57330bp-43, 0x1.4cdf36e6d82fap-47, -0x1.268e1d82676b7p-51, 0x1.046ea45a2b890p-55, -0x1.cb8859dbb3a27p-60},
    {0x1.f9bf042a53ea3p-6, -0x1.ba1290176d13bp-10, 0x1.81d7cf9b7fb07p-14, -0x1.5044dc0a49a5dp-18, 0x1.24a24fe1d7a45p-22, -0x1.fc93f08c8b842p-27, 0x1.b94b21200ca18p-31, -0x1.7e5b136ce3376p-35, 0x1.4acfbdf679396p-39, -0x1.1dcdf1c0320c2p-43, 0x1.ed22776f0e620p-48, -0x1.a8d3e41a55081p-52, 0x1.6db17f539a209p-56, -0x1.3a25a15cf674fp-60},
    {0x1.ec4c56e222a08p-6, -0x1.a2e86ea5b3195p-10, 0x1.63f537f4becd1p-14, -0x1.2e0b61ed00b4dp-18, 0x1.ffe13301f91e3p-23, -0x1.b124d4ad6420fp-27, 0x1.6e03424297dbbp-31, -0x1.34dc4b3e5570ap-35, 0x1.044685630180bp-39, -0x1.b6114d828cad6p-44, 0x1.70272ccbe76a3p-48, -0x1.34fa5b2ffe435p-52, 0x1.031ea663d925ap-56, -0x1.b1c51f86aa1a7p-61},
    {0x1.df8bc439b7f7ep-6, -0x1.8d83e5c42ee37p-10, 0x1.4913c9af8e3bfp-14, -0x1.100f68a52ce26p-18, 0x1.c13fc8d43b8b7p-23, -0x1.726e446740699p-27, 0x1.310a2d5604252p-31, -0x1.f5ba346fabb97p-36, 0x1.9c14e56b850fbp-40, -0x1.5203a5dfa4727p-44, 0x1.14e6c2f95faefp-48, -0x1.c51771744428bp-53, 0x1.726e2395eff39p-57, -0x1.2e4a4fa3b33f8p-61},
    {0x1.d36fd78ee69a7p-6, -0x1.79b7e7dd8df24p-10, 0x1.30d5596b63733p-14, -0x1.eb675154400e4p-19, 0x1.8b953963ea6b0p-23, -0x1.3e0c31f77a773p-27, 0x1.fec7cef4d538bp-32, -0x1.99a4b4c87edb3p-36, 0x1.481ff35639db0p-40, -0x1.0680fb24aee14p-44, 0x1.a37eeb99cd675p-49, -0x1.4ec72e1f27621p-53, 0x1.0afcc03b8fe9ep-57, -0x1.a9194dd1e02c0p-62},
    {0x1.c7ec6e4e1cb8dp-6, -0x1.675cdaee276e8p-10, 0x1.1ae938b2d0fdcp-14, -0x1.bce98fc93c7d1p-19, 0x1.5d6bb578b6911p-23, -0x1.1218d82ef895ap-27, 0x1.ad829382a27b5p-32, -0x1.501f55e34b18ap-36, 0x1.06bab3bde809ep-40, -0x1.9a3d831cc9313p-45, 0x1.3fe919ad3c309p-49, -0x1.f25b8fd955bcdp-54, 0x1.83eb671f06031p-58, -0x1.2d72e3b27a94cp-62},
    {0x1.bcf68f83c31fdp-6, -0x1.564fd2e4c0b93p-10, 0x1.070a03192fa8cp-14, -0x1.93c92ac938687p-19, 0x1.35915ab5150e6p-23, -0x1.da20eb80e16afp-28, 0x1.6aabffac975b3p-32, -0x1.151a43ba9b8e0p-36, 0x1.a6f7eb4ae047fp-41, -0x1.42724ab5d2234p-45, 0x1.eb142628cf68cp-50, -0x1.7588b5805a69bp-54, 0x1.1bf2deb746880p-58, -0x1.af01c872da533p-63},
    {0x1.b2844916e18bcp-6, -0x1.4671ebdfc0001p-10, 0x1.e9f7a36d176d5p-15, -0x1.6f4c771341efep-19, 0x1.130aa3c1ed5a1p-23, -0x1.9b77aaf55d00fp-28, 0x1.3372d1fe64f61p-32, -0x1.caf49b23f36a3p-37, 0x1.56317c42b490dp-41, -0x1.fdb9d34c2fa23p-46, 0x1.7b3bf848666b7p-50, -0x1.19d93519c13b1p-54, 0x1.a2b193fb7ab79p-59, -0x1.3683e321f0ed8p-63},
    {0x1.a88c91c5ecb4fp-6, -0x1.37a7be8b4f5ccp-10, 0x1.c9158119a5b09p-15, -0x1.4ed6652ba8fdap-19, 0x1.ea0f924bf7d09p-24, -0x1.663fc99ed7e47p-28, 0x1.059ebd58c759dp-32, -0x1.7db6fca9a81b2p-37, 0x1.162ecebb9410ap-41, -0x1.950c48510738cp-46, 0x1.26956d113e20ap-50, -0x1.ac0dcc3071dfbp-55, 0x1.36d278d1fde5cp-59, -0x1.c2bbe517c919ap-64},
    {0x1.9f072f27c65cfp-6, -0x1.29d8ea0728c1ep-10, 0x1.ab136ba35e9c9p-15, -0x1.31e194c14c0cdp-19, 0x1.b5b8c690dab8fp-24, -0x1.38e226dcc699dp-28, 0x1.bedb03e45cb51p-33, -0x1.3ec816da5d97cp-37, 0x1.c6620e5952f9fp-42, -0x1.4383f1e8217c5p-46, 0x1.cc3a5ed00b086p-51, -0x1.47099d5403321p-55, 0x1.d0886898bd535p-60, -0x1.4974b47b336dep-64},
    {0x1.95ec9f140e250p-6, -0x1.1cefaf9ea2176p-10, 0x1.8fa2bcff577bfp-15, -0x1.17fc56cd31b5bp-19, 0x1.87f19394cd9b0p-24, -0x1.12131ab93ac84p-28, 0x1.7ef10e49597fcp-33, -0x1.0b4609c2f1eadp-37, 0x1.74bc3414cb90cp-42, -0x1.03a937317ffedp-46, 0x1.6970a295b1374p-51, -0x1.f6a4b4b6b37aap-56, 0x1.5d52cffd68365p-60, -0x1.e4e3d2296746bp-65},
    {0x1.8d3603f0a17f3p-6, -0x1.10d89d51818dap-10, 0x1.767eac627aca4p-15, -0x1.00c56d45c8e89p-19, 0x1.5fc99912d85adp-24, -0x1.e1867cf2bdad6p-29, 0x1.494186fc5c8ffp-33, -0x1.c1de2b71d0115p-38, 0x1.330db5d5b7ef0p-42, -0x1.a2c6c33d4f351p-47, 0x1.1d519685fde1ap-51, -0x1.846f92ede1ebcp-56, 0x1.0847426d2c0a1p-60, -0x1.67264f05778dep-65},
    {0x1.84dd1377e3a8ap-6, -0x1.058244bafe92dp-10, 0x1.5f6ae4a38d695p-15, -0x1.d7d2c449a71f5p-20, 0x1.3c76f4e360105p-24, -0x1.a82706839f460p-29, 0x1.1bfeb3ca9194fp-33, -0x1.7bf8ef6419a2fp-38, 0x1.fbf21e46971d1p-43, -0x1.533785373f833p-47, 0x1.c4ae9b5c042adp-52, -0x1.2dca6ba4afac6p-56, 0x1.9232cc0c92a4fp-61, -0x1.0bacfad977ee7p-65},
    {0x1.7cdc079d227b0p-6, -0x1.f5b9f8acacbe5p-11, 0x1.4a32548f25971p-15, -0x1.b240af9fb1de1p-20, 0x1.1d4f7820ccc48p-24, -0x1.7697a4c936906p-29, 0x1.eb67006c8ed57p-34, -0x1.420cd64153bc6p-38, 0x1.a5c5d8c5fcb26p-43, -0x1.13f5533fb6f70p-47, 0x1.68cf6f56accd2p-52, -0x1.d75d0b2dd201dp-57, 0x1.33c0e583c9019p-61, -0x1.9163908499655p-66},
    {0x1.752d9142f6a5bp-6, -0x1.e1b552f7956c4p-11, 0x1.36a62ef227daap-15, -0x1.905876aa5d7c6p-20, 0x1.01c32a638c67ep-24, -0x1.4ba746b36fc5ep-29, 0x1.aa62465a9bbdfp-34, -0x1.11dde0c67763fp-38, 0x1.5f8753cd8ca7ap-43, -0x1.c2daa155bed8ep-48, 0x1.20e4679567587p-52, -0x1.71ee6e69b4dc5p-57, 0x1.d97e6afb50474p-62, -0x1.2eade7d07d610p-66},
    {0x1.6dcccc8375f48p-6, -0x1.cedd23751efb4p-11, 0x1.249d12170481ap-15, -0x1.71ae8bba7e534p-20, 0x1.d2afabb9a7cd3p-25, -0x1.26582e6655deap-29, 0x1.7301aac5869cbp-34, -0x1.d346751d51102p-39, 0x1.26092e3256ac8p-43, -0x1.71c3a62d64f42p-48, 0x1.d0a40d76e0a92p-53, -0x1.23b543c015762p-57, 0x1.6e1ef6ca1aa30p-62, -0x1.cb034bc3e33dcp-67},
    {0x1.66b53653f346ap-6, -0x1.bd1a64df9fefbp-11, 0x1.13f25001277b1p-15, -0x1.55e57d05dce86p-20, 0x1.a74accdf701f8p-25, -0x1.05d6880d58cd9p-29, 0x1.43b146a37870ap-34, -0x1.8fdccfc6ba2bep-39, 0x1.ed97718ea6d70p-44, -0x1.306bbb890f153p-48, 0x1.77397e37ef306p-53, -0x1.ce281bc541fadp-58, 0x1.1c7f79905cbd4p-62, -0x1.5de5ca8085327p-67},
    {0x1.5fe2a3563dfe2p-6, -0x1.ac583b56e2bc1p-11, 0x1.048551efffcafp-15, -0x1.3cabe18419797p-20, 0x1.80a5e345caa40p-25, -0x1.d2e1baf531685p-30, 0x1.1b2545c5684cbp-34, -0x1.5730479cbcd1ap-39, 0x1.9fab06d56ce9dp-44, -0x1.f718e50b76df3p-49, 0x1.303df9a60cb28p-53, -0x1.6fb69f0f2f0aap-58, 0x1.bc40255dbc9b9p-63, -0x1.0c1635972aaf9p-67},
    {0x1.595137b029e25p-6, -0x1.9c83b7359ced3p-11, 0x1.ec722562d04cap-16, -0x1.25ba9c03bc25fp-20, 0x1.5e288c91bd2f9p-25, -0x1.a124030ccd151p-30, 0x1.f09806b7aaa3dp-35, -0x1.27631b028932cp-39, 0x1.5f2ac7b6a49edp-44, -0x1.a131d5374ea7ep-49, 0x1.ef4c60c7723cep-54, -0x1.25cfc33dfe234p-58, 0x1.5c722f49439ffp-63, -0x1.9cd5d8cf11213p-68},
    {0x1.52fd5fc7e083dp-6, -0x1.8d8b9fa43478bp-11, 0x1.d1e7582f54420p-16, -0x1.10d36533a09a9p-20, 0x1.3f4fd366bac51p-25, -0x1.757849d5b134cp-30, 0x1.b48609027d8b2p-35, -0x1.fde278a73296fp-40, 0x1.2997220e3da8ep-44, -0x1.5b24bbfb66baap-49, 0x1.94ae60da59dfep-54, -0x1.d7720156cbfb3p-59, 0x1.1282e11f449c2p-63, -0x1.3f6179536e964p-68},
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

/* erf(x) for |x| < 1/2: x Q(x^2), Q's constant in two parts (an odd function of x). */
static inline double ember_erf_small(double x) {
    const double z = x * x;
    const double *q = EMBER_ERF_SMALL;
    double p = q[9];
    for (int i = 8; i >= 1; i--) p = q[i] + z * p;
    return x * q[0] + x * (EMBER_TWO_OVER_SQRT_PI_LO + z * p);
}

/* erf(x) in double, <= 2 ulp. |x| < 1/2: x Q(x^2) with Q's constant in two parts;
 * 1/2 <= |x| < 6: the interval's polynomial around its centre (table row k = floor(2|x|));
 * |x| >= 6: +-1 (1 - erf(6) is 2e-17, below half an ulp of 1). */
static inline double ember_erf(double x) {
    const double a = fabs(x);
    const int is_small = a < 0.5;
    const double xs = ember_pick(is_small, a, 0.0); /* each part on an input it takes */
    const double small = ember_erf_small(xs);
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

/* erfc(x) in double. |x| < 1/2: 1 - erf(x); |x| >= 1/2: e^(-a^2) erfcx(a), a = |x|, erfcx by
 * its interval's polynomial (table row k = floor(2a), a held in [1/2, 27.4]: e^(-27.4^2)
 * is 0) and x < 0 taking 2 - erfc(a). e^(-a^2) = e^(-hi^2) (1 + m): hi is a's top 26 bits
 * (Veltkamp), so hi^2 is exact, and m = e^(-d) - 1 for the small rest d = a^2 - hi^2
 * (|d| < 2^-14) by three terms of its series; erfc keeps its relative accuracy to the
 * underflow. +inf: 0; -inf: 2; NaN: NaN. */
static inline double ember_erfc(double x) {
    const double a = fabs(x);
    const int is_small = a < 0.5;
    const double small = 1.0 - ember_erf_small(ember_pick(is_small, x, 0.0));
    const uint64_t ua = ember_bits_d(a), umax = ember_bits_d(27.4), uh = ember_bits_d(0.5);
    uint64_t ub = ua < umax ? ua : umax; /* (NaN and inf held at 27.4: picked out below) */
    ub = ub > uh ? ub : uh;
    const double ab = ember_double_of(ub);
    int k = (int)(ab + ab); /* 1 .. 54 */
    k = k < 54 ? k : 54;
    const double *t = &EMBER_ERFCX_PIECE[0][0];
    const int at = k * 14;
    const double h = ab - ((double)k * 0.5 + 0.25);
    /* (Horner written out, as erf's: as a loop over the row, GCC 12 keeps the map scalar) */
    double r = t[at + 13];
    r = t[at + 12] + h * r;
    r = t[at + 11] + h * r;
    r = t[at + 10] + h * r;
    r = t[at + 9] + h * r;
    r = t[at + 8] + h * r;
    r = t[at + 7] + h * r;
    r = t[at + 6] + h * r;
    r = t[at + 5] + h * r;
    r = t[at + 4] + h * r;
    r = t[at + 3] + h * r;
    r = t[at + 2] + h * r;
    r = t[at + 1] + h * r;
    r = t[at] + h * r;
    const double split = ab * 134217729.0; /* 2^27 + 1 */
    const double hi = split - (split - ab);
    const double d = (ab - hi) * (ab + hi);
    const double m = -d * (1.0 - d * (0.5 - d * (1.0 / 6.0)));
    const double e = ember_exp(-(hi * hi));
    const double tail = (e + e * m) * r;
    const double big = ember_pick(x < 0.0, 2.0 - tail, tail);
    return ember_pick(x != x, x, ember_pick(is_small, small, big));
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
static inline float ember_erfcf(float x) { return (float)ember_erfc((double)x); }

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
#define ember_erfc_t(x) EMBER_GENERIC(ember_erfc, x)
#define ember_sigmoid_t(x) EMBER_GENERIC(ember_sigmoid, x)

#endif
