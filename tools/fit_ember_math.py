"""Fit the polynomial coefficients of src/ember/native/csrc/ember_math.h and print them.

    python tools/fit_ember_math.py > /tmp/coefficients.h

Needs mpmath (a dev tool only: ember never imports it). Each polynomial is a Chebyshev
least-squares fit (mpmath.chebyfit, 50 digits) of a smooth function on a small interval,
turned into monomial coefficients and rounded to the C type. The fit errors printed beside
them are those of the exact-coefficient polynomial; rounding the coefficients and the
arithmetic of evaluation add to them, and tests/native/test_ember_math.py measures the
result against references.
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 50
LN2_HALF = mp.log(2) / 2


def fit(f, lo, hi, degree):
    """Monomial coefficients, lowest degree first, and the max error of the fit
    (sampled at 401 points)."""
    coeffs = mp.chebyfit(f, [lo, hi], degree + 1)
    # (chebyfit's own error estimate is unreliable here: measure it on a fine grid)
    err = max(abs(mp.polyval(coeffs, t) - f(t)) for t in mp.linspace(lo, hi, 401))
    return list(reversed(coeffs)), err


def c_double(v) -> str:
    return float(v).hex()


def emit(name, coeffs, fmt, err):
    print(f"/* {name}: fit error {mp.nstr(err, 3)} */")
    print(f"#define {name}_N {len(coeffs)}")
    print(f"static const {'float' if False else 'double'} {name}[] = {{"
          + ", ".join(fmt(c) for c in coeffs) + "};")


def exp_tail(r):
    """(e^r - 1 - r) / r^2, the part of e^r the polynomial carries."""
    return mp.mpf(1) / 2 if r == 0 else (mp.exp(r) - 1 - r) / (r * r)


def erf_small(z):
    """erf(x) / x as a function of z = x^2."""
    if z == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(z)
    return mp.erf(x) / x


def main() -> None:
    # float: float-rounded coefficients (the float exp evaluates in float)
    coeffs, err = fit(exp_tail, -LN2_HALF, LN2_HALF, 4)
    coeffs = [mp.mpf(float(mp.mpf(c))) for c in coeffs]
    print("/* exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2 */")
    print(f"/* EXPF_P: fit error {mp.nstr(err, 3)} */")
    print("static const float EXPF_P[] = {" + ", ".join(
        float(c).hex() + "f" for c in coeffs) + "};")
    coeffs, err = fit(exp_tail, -LN2_HALF, LN2_HALF, 10)
    emit("EXP_P", coeffs, c_double, err)
    coeffs, err = fit(erf_small, 0, mp.mpf(1) / 4, 9)
    emit("ERF_SMALL", coeffs, c_double, err)
    # erf on [k/2, k/2 + 1/2), k = 1..11: erf(c) as a double-double and
    # (erf(c + h) - erf(c)) / h as a polynomial in h, |h| <= 1/4, c = k/2 + 1/4
    rows = []
    worst = 0
    for k in range(1, 12):
        c = mp.mpf(k) / 2 + mp.mpf(1) / 4
        e = mp.erf(c)
        hi = mp.mpf(float(e))
        lo = e - hi

        def slope(h, c=c, e=e):
            return 2 / mp.sqrt(mp.pi) * mp.exp(-c * c) if h == 0 else (mp.erf(c + h) - e) / h

        coeffs, err = fit(slope, -mp.mpf(1) / 4, mp.mpf(1) / 4, 13)
        worst = max(worst, err / 4)
        rows.append([hi, lo] + coeffs)
    print(f"/* ERF_PIECE[k]: erf(c) high, low, then the slope polynomial; worst fit error "
          f"of h * slope {mp.nstr(worst, 3)} */")
    print(f"#define ERF_PIECE_N {len(rows[0]) - 2}")
    print("static const double ERF_PIECE[12][16] = {{0},")
    for r in rows:
        print("    {" + ", ".join(c_double(v) for v in r) + "},")
    print("};")
    # erfcx(x) = e^(x^2) erfc(x) on [k/2, k/2 + 1/2), k = 1..54 (erfc underflows past
    # 27.3): a polynomial in h = x - c, |h| <= 1/4, c = k/2 + 1/4; the error relative
    rows = []
    worst = 0
    for k in range(1, 55):
        c = mp.mpf(k) / 2 + mp.mpf(1) / 4

        def erfcx(h, c=c):
            return mp.erfc(c + h) * mp.exp((c + h) ** 2)

        coeffs, err = fit(erfcx, -mp.mpf(1) / 4, mp.mpf(1) / 4, 13)
        worst = max(worst, err / erfcx(mp.mpf(1) / 4))
        rows.append(coeffs)
    print(f"/* ERFCX_PIECE[k]: erfcx(c + h) as a polynomial in h; worst relative fit error "
          f"{mp.nstr(worst, 3)} */")
    print("static const double ERFCX_PIECE[55][14] = {{0},")
    for r in rows:
        print("    {" + ", ".join(c_double(v) for v in r) + "},")
    print("};")


if __name__ == "__main__":
    main()
