/* blas.h: row-major matrix products through the BLAS NumPy uses (runtime.c holds its
 * address). C (m x n) = alpha op(A) op(B) + beta C, op(X) = X or X^T as ta/tb say.
 * Included once per scalar type: EMBER_GEMM is the product of scalar_t. */
#ifndef EMBER_BLAS_H
#define EMBER_BLAS_H
#include <stdint.h>

void ember_gemm_f32(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                    float *c, int64_t ldc);
void ember_gemm_f64(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                    const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                    double *c, int64_t ldc);
int ember_has_blas(void);

/* The kernels' product: as above, or ember's own float32 product (gemm.c) where `own`. */
void ember_product_f32(int own, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc);
void ember_product_f64(int own, int ta, int tb, int64_t m, int64_t n, int64_t k,
                       double alpha, const double *a, int64_t lda, const double *b,
                       int64_t ldb, double beta, double *c, int64_t ldc);

/* Columns of B per packed panel of ember's own product (gemm.c). */
#define EMBER_PANEL 32

/* Writes rows k0.. (kc of them) and columns j0.. (nc) of a product's B as panels of
 * EMBER_PANEL columns: for each k of a panel, its EMBER_PANEL values side by side, a
 * ragged last panel padded with zeros. */
typedef void (*ember_pack_fn)(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                              void *bp);

/* C (m x n, row-major, rows ldc apart) = A (m x k, rows lda apart) B, by ember's own
 * product, B never stored whole: `pack` writes its panels as the product needs them (a
 * convolution's columns straight from its input). Nonzero where it did nothing: no own
 * product for this dtype or CPU, or no scratch memory. */
int ember_packed_product_f32(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                             ember_pack_fn pack, const void *ctx, float *c, int64_t ldc);
int ember_packed_product_f64(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                             ember_pack_fn pack, const void *ctx, double *c, int64_t ldc);
#endif
