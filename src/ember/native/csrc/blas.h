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
#endif
