// Floating-point helpers of the circuits layer, each written to give exactly the double that
// the Python implementation (numpy on x86-64 with AVX2/AVX-512 and FMA, CPython's float) gives,
// so that the C++ transforms, scales and plaintexts equal python/veil/_bootstrap.py's bit for
// bit (tests/python/test_circuits.py compares them):
//   - complex products as numpy's SIMD loops: re = fma(ar, br, -(ai bi)), im = fma(ar, bi, ai br);
//   - complex quotients by Smith's method, as numpy's loops (scalar and SIMD alike);
//   - |z| as numpy's SIMD absolute: max * sqrt(fma(r, r, 1)), r = min / max;
//   - products of primes rounded once, to nearest even, as CPython's int -> float;
//   - sums of floats as CPython's sum() since 3.12 (Neumaier's compensated summation).
// Host only (the circuits layer is host code that calls the evaluator).
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

namespace veil::circuits::detail {

using cplx = std::complex<double>;

/// a * b as numpy computes complex128 products (FMA; the order of the operands matters for the
/// imaginary part).
inline cplx np_mul(cplx a, cplx b) {
  return {std::fma(a.real(), b.real(), -(a.imag() * b.imag())),
          std::fma(a.real(), b.imag(), a.imag() * b.real())};
}

/// a / b as numpy computes complex128 quotients (Smith's algorithm; b != 0).
inline cplx np_div(cplx a, cplx b) {
  const double br = b.real(), bi = b.imag();
  if (std::fabs(br) >= std::fabs(bi)) {
    const double rat = bi / br;
    const double scl = 1.0 / (br + bi * rat);
    return {(a.real() + a.imag() * rat) * scl, (a.imag() - a.real() * rat) * scl};
  }
  const double rat = br / bi;
  const double scl = 1.0 / (bi + br * rat);
  return {(a.real() * rat + a.imag()) * scl, (a.imag() * rat - a.real()) * scl};
}

/// |z| as numpy's vectorized complex absolute value.
inline double np_abs(cplx z) {
  const double re = std::fabs(z.real()), im = std::fabs(z.imag());
  const double larger = re > im ? re : im, smaller = re > im ? im : re;
  const double ratio = larger == 0.0 ? 0.0 : smaller / larger;
  return std::sqrt(std::fma(ratio, ratio, 1.0)) * larger;
}

/// The exact product of `factors`, rounded once to the nearest double (ties to even), as
/// CPython's float(math.prod(...)). Exact in any size (multi-word integer arithmetic).
double exact_product(const std::vector<std::uint64_t>& factors);

/// sum(xs) as CPython 3.12+ computes it for floats: 0 + xs[0], then Neumaier's compensated
/// summation ("improved Kahan-Babuska", Z. angew. Math. Mech. 54, 1974), the compensation added
/// at the end when finite. CPython 3.11 and older add naively, which can differ in the last bit:
/// python/veil/_bootstrap.py's scales then differ from these (and from each other) by an ulp.
inline double py_sum(const std::vector<double>& xs) {
  if (xs.empty()) return 0.0;
  double s = 0.0 + xs[0], c = 0.0;
  for (std::size_t i = 1; i < xs.size(); ++i) {
    const double x = xs[i], t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  if (c != 0.0 && std::isfinite(c)) s += c;
  return s;
}

/// ceil(log2(x)) for x >= 1, exactly (Python's math.ceil(math.log2(x)) for integers).
inline int ceil_log2(std::uint64_t x) {
  int r = 0;
  while ((std::uint64_t{1} << r) < x) ++r;
  return r;
}

}  // namespace veil::circuits::detail
