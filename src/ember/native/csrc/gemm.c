/* gemm.c: ember's own float32 matrix product, for CPUs with AVX-512 whose BLAS runs
 * narrower kernels.
 *
 * NumPy's OpenBLAS picks its kernels by processor, and on some machines it runs its AVX2
 * ("Haswell") kernels on a CPU with 512-bit units (an AMD EPYC of this project's: it
 * reaches about 125 GFLOP/s a core where this product reaches 200-235). Which product a
 * kernel uses is decided in Python (native/blas.py `own_product`), once per process, from
 * what the machine is; here are only the product and whether it was compiled in.
 *
 * C (m x n, row-major, rows ldc apart) = alpha op(A) op(B) + beta C, as BLAS's sgemm, in
 * the usual three-level blocking: op(B) is copied ("packed") KC rows by NC columns at a
 * time into panels NR columns wide, op(A) MC rows by KC at a time into panels MR rows
 * tall, and the micro-kernel multiplies one A panel by one B panel into an MR x NR block of
 * C held in 24 vector registers (a B panel stays in L1 while the A panels stream past it
 * from L2). Packing reads either layout of each operand (ta, tb), so no transposed copy
 * is made; the panels' ragged ends are padded with zeros, whose products land in rows and
 * columns that are never stored.
 *
 * Rounding: each element of C is one sum over k, in order, of fused multiply-adds, in
 * KC-long runs added to C between runs; BLAS groups its sums otherwise, so the two agree
 * within the usual bound of a float32 sum of products (a few units of the last place of
 * the sum of the products' magnitudes), and each is the same run to run. beta == 0 never
 * reads C (as BLAS: NaN in C's old values does not spread). Single-threaded: the kernels
 * call it from their own tasks on the pool.
 */
#include <string.h>

#include "blas.h"

#define GEMM_MR 12          /* rows of C per micro-kernel call */
#define GEMM_NR EMBER_PANEL /* columns: two 16-float vectors */
#define GEMM_KC 384  /* the longest run of k per packed panel (runs are made even) */
#define GEMM_MC 144  /* rows of op(A) packed at a time */
#define GEMM_NC 2048 /* columns of op(B) packed at a time */

#if defined(__AVX512F__)
#include <immintrin.h>

int ember_own_gemm_built(void) { return 1; }

/* Rows i0.. (mc of them) and k0.. (kc) of op(A), as panels of MR rows: for each k, the
 * panel's MR values side by side. */
static void gemm_pack_a(int ta, const float *a, int64_t lda, int64_t i0, int64_t mc,
                        int64_t k0, int64_t kc, float *ap) {
    for (int64_t ir = 0; ir < mc; ir += GEMM_MR) {
        const int64_t mr = EMBER_MIN(GEMM_MR, mc - ir);
        for (int64_t k = 0; k < kc; k++, ap += GEMM_MR) {
            int64_t i = 0;
            if (ta) {
                const float *s = a + (k0 + k) * lda + i0 + ir;
                for (; i < mr; i++) ap[i] = s[i];
            } else {
                const float *s = a + (i0 + ir) * lda + k0 + k;
                for (; i < mr; i++) ap[i] = s[i * lda];
            }
            for (; i < GEMM_MR; i++) ap[i] = 0;
        }
    }
}

/* Rows k0.. (kc) and columns j0.. (nc) of op(B), as panels of NR columns. */
static void gemm_pack_b(int tb, const float *b, int64_t ldb, int64_t k0, int64_t kc,
                        int64_t j0, int64_t nc, float *bp) {
    for (int64_t jr = 0; jr < nc; jr += GEMM_NR) {
        const int64_t nr = EMBER_MIN(GEMM_NR, nc - jr);
        for (int64_t k = 0; k < kc; k++, bp += GEMM_NR) {
            int64_t j = 0;
            if (!tb) {
                const float *s = b + (k0 + k) * ldb + j0 + jr;
                for (; j < nr; j++) bp[j] = s[j];
            } else {
                const float *s = b + (j0 + jr) * ldb + k0 + k;
                for (; j < nr; j++) bp[j] = s[j * ldb];
            }
            for (; j < GEMM_NR; j++) bp[j] = 0;
        }
    }
}

/* The MR x NR block at c (rows ldc apart) = alpha (A panel x B panel) + beta c, or, when
 * `more` (a later run of k), c + alpha (A panel x B panel). */
static inline __attribute__((always_inline)) void gemm_micro(int64_t kc, const float *ap,
        const float *bp, float alpha, float beta, int more, float *c, int64_t ldc) {
    __m512 acc[GEMM_MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < GEMM_MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++, ap += GEMM_MR, bp += GEMM_NR) {
        const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
#pragma GCC unroll 12
        for (int i = 0; i < GEMM_MR; i++) {
            const __m512 av = _mm512_set1_ps(ap[i]);
            acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
        }
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int i = 0; i < GEMM_MR; i++) {
        float *ci = c + i * ldc;
        for (int h = 0; h < 2; h++) {
            __m512 v = alpha == 1 ? acc[i][h] : _mm512_mul_ps(va, acc[i][h]);
            if (more)
                v = _mm512_add_ps(_mm512_loadu_ps(ci + 16 * h), v);
            else if (beta != 0)
                v = _mm512_add_ps(v, beta == 1 ? _mm512_loadu_ps(ci + 16 * h)
                                               : _mm512_mul_ps(vb, _mm512_loadu_ps(ci + 16 * h)));
            _mm512_storeu_ps(ci + 16 * h, v);
        }
    }
}

/* A block of C at its ragged edge (mr x nr of the MR x NR): through a whole block in
 * scratch, then its part added as gemm_micro adds it. */
static void gemm_edge(int64_t kc, const float *ap, const float *bp, float alpha, float beta,
                      int more, float *c, int64_t ldc, int64_t mr, int64_t nr) {
    float t[GEMM_MR * GEMM_NR];
    gemm_micro(kc, ap, bp, alpha, 0, 0, t, GEMM_NR);
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++) {
            float *d = c + i * ldc + j;
            const float v = t[i * GEMM_NR + j];
            *d = more ? *d + v : beta == 0 ? v : v + (beta == 1 ? *d : beta * *d);
        }
}

/* C = alpha op(A) B + beta C, B's panels written by `pack`. Returns nonzero where its
 * scratch memory could not be had (C untouched). */
static int gemm_blocked(int ta, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                        int64_t lda, ember_pack_fn pack, const void *ctx, float beta, float *c,
                        int64_t ldc) {
    if (m <= 0 || n <= 0) return 0;
    const int64_t runs = k > 0 ? (k + GEMM_KC - 1) / GEMM_KC : 1;
    const int64_t kc_most = EMBER_MAX((k + runs - 1) / runs, 1);
    float *ap = ember_scratch(sizeof(float) * GEMM_MC * kc_most);
    float *bp = ember_scratch(sizeof(float) * kc_most * EMBER_MIN(GEMM_NC, n + GEMM_NR));
    if (!ap || !bp) {
        ember_scratch_free(ap);
        ember_scratch_free(bp);
        return 1;
    }
    for (int64_t j0 = 0; j0 < n; j0 += GEMM_NC) {
        const int64_t nc = EMBER_MIN(GEMM_NC, n - j0);
        for (int64_t run = 0; run < runs; run++) {
            /* k == 0: one empty run, which still writes beta C (alpha times nothing) */
            const int64_t k0 = k * run / runs, kc = k * (run + 1) / runs - k0;
            const int more = run > 0;
            pack(ctx, k0, kc, j0, nc, bp);
            for (int64_t i0 = 0; i0 < m; i0 += GEMM_MC) {
                const int64_t mc = EMBER_MIN(GEMM_MC, m - i0);
                gemm_pack_a(ta, a, lda, i0, mc, k0, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += GEMM_NR) {
                    const int64_t nr = EMBER_MIN(GEMM_NR, nc - jr);
                    for (int64_t ir = 0; ir < mc; ir += GEMM_MR) {
                        const int64_t mr = EMBER_MIN(GEMM_MR, mc - ir);
                        float *cij = c + (i0 + ir) * ldc + j0 + jr;
                        const float *pa = ap + ir * kc, *pb = bp + jr * kc;
                        if (mr == GEMM_MR && nr == GEMM_NR)
                            gemm_micro(kc, pa, pb, alpha, beta, more, cij, ldc);
                        else
                            gemm_edge(kc, pa, pb, alpha, beta, more, cij, ldc, mr, nr);
                    }
                }
            }
        }
    }
    ember_scratch_free(ap);
    ember_scratch_free(bp);
    return 0;
}

typedef struct {
    int tb;
    const float *b;
    int64_t ldb;
} gemm_b_matrix;

static void gemm_pack_matrix(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                             void *bp) {
    const gemm_b_matrix *m = ctx;
    gemm_pack_b(m->tb, m->b, m->ldb, k0, kc, j0, nc, bp);
}

/* Returns nonzero where its scratch memory could not be had (C untouched). */
int ember_own_gemm_f32(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc) {
    const gemm_b_matrix bm = {tb, b, ldb};
    return gemm_blocked(ta, m, n, k, alpha, a, lda, gemm_pack_matrix, &bm, beta, c, ldc);
}

int ember_packed_product_f32(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                             ember_pack_fn pack, const void *ctx, float *c, int64_t ldc) {
    return gemm_blocked(0, m, n, k, 1, a, lda, pack, ctx, 0, c, ldc);
}

#else /* no AVX-512: the kernels keep BLAS's product */

int ember_own_gemm_built(void) { return 0; }

int ember_own_gemm_f32(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc) {
    ember_gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return 0;
}

int ember_packed_product_f32(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                             ember_pack_fn pack, const void *ctx, float *c, int64_t ldc) {
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)pack, (void)ctx, (void)c, (void)ldc;
    return 1; /* (no product of ember's own: the caller writes its columns out for BLAS) */
}

#endif

/* (no float64 product of ember's own) */
int ember_packed_product_f64(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                             ember_pack_fn pack, const void *ctx, double *c, int64_t ldc) {
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)pack, (void)ctx, (void)c, (void)ldc;
    return 1;
}
