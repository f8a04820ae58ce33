/* silu.h: SiLU's derivative, one element at a time, as PyTorch's silu_backward orders it:
 * (g s)(1 + x (1 - s)), s = 1 / (1 + e^-x), with ember_math.h's exp (within 1 ulp). The
 * eager kernel (activation.c) and compiled programs' fused loops both call it, so the two
 * give the same bits; ops/activation_backward.py's NumPy twin makes the same roundings with
 * NumPy's exp. */
#ifndef EMBER_SILU_H
#define EMBER_SILU_H

#include "ember_math.h"

static inline float ember_silu_gradf(float g, float x) {
    const float s = 1.0f / (1.0f + ember_expf(-x));
    return (g * s) * (1.0f + x * (1.0f - s));
}

static inline double ember_silu_grad(double g, double x) {
    const double s = 1.0 / (1.0 + ember_exp(-x));
    return (g * s) * (1.0 + x * (1.0 - s));
}

#define ember_silu_grad_t(g, x) \
    _Generic((g), float: ember_silu_gradf, default: ember_silu_grad)(g, x)

#endif
