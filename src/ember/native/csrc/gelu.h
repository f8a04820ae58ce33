/* gelu.h: GELU and its derivative in float, one element at a time: ops/gelu.py's
 * NumPy bodies (_gelu_body, _gelu_grad_body) operation for operation, each constant rounded
 * to float first, with ember_math.h's exp (within 1 ulp) for NumPy's. activation.c's eager
 * kernels and compiled programs' fused loops both call these, so the two give the same bits.
 *
 * gelu: x Phi(x), Phi(x) = h + (x > 0)(1 - 2h), h = 0.5 erfc(|x| / sqrt 2) = t Q(t) e, with
 * t = 1 / (1 + c |x|), Q of degree 8 by Horner from q[0], e = exp(-x^2 / 2).
 * gelu_grad: g (Phi(x) + x phi(x)), Phi(x) read off the forward's y = x Phi(x) (0.5 at 0),
 * x phi(x) = e x c2 (c2 = 1 / sqrt(2 pi)). */
#ifndef EMBER_GELU_H
#define EMBER_GELU_H

#include <math.h>

#include "ember_math.h"

#define EMBER_GELU_NQ 9

static inline float ember_gelu_f(float x, const float *q, float c) {
    const float e = ember_expf((x * x) * -0.5f);
    float t = fabsf(x) * c;
    t = 1.0f / (t + 1.0f);
    float h = t * q[0];
    for (int k = 1; k < EMBER_GELU_NQ; k++) h = (h + q[k]) * t;
    h = h * e;
    const float u = ((h * -2.0f) + 1.0f) * (float)(x > 0);
    return (h + u) * x;
}

static inline float ember_gelu_grad_f(float g, float x, float y, float c2) {
    const float r = x == 0 ? 0.5f : y / x;
    const float e = ember_expf((x * x) * -0.5f);
    return (r + (e * x) * c2) * g;
}

#endif
