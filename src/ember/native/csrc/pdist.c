/* pdist.c: the gradient of pdist for p = 2, PyTorch's CPU loop (ATen's
 * `backward_down_column_pdist` with its `tdist_calc`), the C twin of
 * ops/pdist_euclidean.py's NumPy kernel. Written once against scalar_t and FN(name);
 * kernels.py compiles it for float and double.
 *
 * For the pairs (i, j), i < j, in row-major order k, with d = x[i] - x[j] per coordinate:
 * res = (g[k] * d) / dist[k] (0 where dist[k] is 0), added to out[i] and subtracted from
 * out[j]. Every coordinate of out[r] so takes its terms in the same order (pairs (i, r)
 * for i < r, then (r, j) for j > r), each operation rounded to scalar_t: the bits
 * PyTorch's vectorised loop gives, whatever its vector width. */
#include <stdint.h>
#include <string.h>

#include "ember.h"

void FN(pdist2_backward)(const scalar_t *x, const scalar_t *g, const scalar_t *dist,
                         scalar_t *out, int64_t n, int64_t m) {
    memset(out, 0, (size_t)(n * m) * sizeof(scalar_t));
    int64_t k = 0;
    for (int64_t i = 0; i + 1 < n; i++) {
        const scalar_t *xi = x + i * m;
        scalar_t *oi = out + i * m;
        for (int64_t j = i + 1; j < n; j++, k++) {
            const scalar_t *xj = x + j * m;
            scalar_t *oj = out + j * m;
            const scalar_t gk = g[k], dk = dist[k];
            if (dk == 0) {  /* (PyTorch adds and subtracts a zero: out never holds -0.0) */
                continue;
            }
            for (int64_t c = 0; c < m; c++) {
                const scalar_t res = (gk * (xi[c] - xj[c])) / dk;
                oi[c] = oi[c] + res;
                oj[c] = oj[c] - res;
            }
        }
    }
}
