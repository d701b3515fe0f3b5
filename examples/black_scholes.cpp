// Black-Scholes: European call and put prices of 2^22 options from the spot
// price S, strike X and years to expiry T, with the riskless rate r and the
// volatility v as scalars. Both prices come from ONE kernel (gpukit::assign
// with two outputs): S, X and T are read once, and the shared subexpressions
// (d1, d2, the discount) are computed once per option. The cumulative normal
// distribution is erf-based: cnd(d) = 0.5 * (1 + erf(d / sqrt(2))).
//
// Checks both prices against a float64 host computation (exit 1 if off),
// prints the first (compiling) and a warm call's time; `--dump` prints the
// CUDA source.
#include "dsl/gpukit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace {

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double cnd(double d) { return 0.5 * (1.0 + std::erf(d / std::sqrt(2.0))); }

} // namespace

int main(int argc, char** argv) {
  bool dump = argc > 1 && std::string_view(argv[1]) == "--dump";
  using gpukit::Array;
  gpukit::rt::Runtime& runtime = gpukit::rt::Runtime::get();

  const int64_t n = int64_t(1) << 22;
  auto S = Array<float>::random({n}, 1, 5.0, 30.0).named("S");
  auto X = Array<float>::random({n}, 2, 1.0, 100.0).named("X");
  auto T = Array<float>::random({n}, 3, 0.25, 10.0).named("T");
  Array<float> call(S.shape()), put(S.shape());
  call.named("call");
  put.named("put");
  const float r = 0.02f, v = 0.30f;

  // The pricing formula, written once; evaluating it launches one kernel.
  auto price = [&] {
    auto sqrt_t = sqrt(T);
    auto d1 = (log(S / X) + (r + 0.5f * v * v) * T) / (v * sqrt_t);
    auto d2 = d1 - v * sqrt_t;
    auto cnd = [](const auto& d) { return 0.5f * (1.0f + erf(d * 0.70710678118654752f)); };
    auto discounted_strike = X * exp(-r * T);
    gpukit::assign(call, S * cnd(d1) - discounted_strike * cnd(d2),
                   put, discounted_strike * cnd(-d2) - S * cnd(-d1));
  };

  auto start = std::chrono::steady_clock::now();
  price();
  runtime.synchronize();
  double first_ms = milliseconds_since(start);
  double warm_ms = 1e30;
  for (int k = 0; k < 3; ++k) {
    start = std::chrono::steady_clock::now();
    price();
    runtime.synchronize();
    warm_ms = std::min(warm_ms, milliseconds_since(start));
  }
  if (dump) {
    auto sqrt_t = sqrt(T);
    auto d1 = (log(S / X) + (r + 0.5f * v * v) * T) / (v * sqrt_t);
    auto d2 = d1 - v * sqrt_t;
    auto cnd = [](const auto& d) { return 0.5f * (1.0f + erf(d * 0.70710678118654752f)); };
    auto discounted_strike = X * exp(-r * T);
    std::printf("%s\n", gpukit::inspect(call, S * cnd(d1) - discounted_strike * cnd(d2), put,
                                        discounted_strike * cnd(-d2) - S * cnd(-d1))
                            .source.c_str());
  }

  std::vector<float> hs = S.to_host(), hx = X.to_host(), ht = T.to_host();
  std::vector<float> hc = call.to_host(), hp = put.to_host();
  double call_error = 0, put_error = 0;
  for (int64_t i = 0; i < n; ++i) {
    double s = hs[i], x = hx[i], t = ht[i], rr = r, vv = v;
    double d1 = (std::log(s / x) + (rr + 0.5 * vv * vv) * t) / (vv * std::sqrt(t));
    double d2 = d1 - vv * std::sqrt(t);
    double k = x * std::exp(-rr * t);
    double c = s * cnd(d1) - k * cnd(d2);
    double p = k * cnd(-d2) - s * cnd(-d1);
    // Prices are differences of similar terms: compare relative to the inputs' scale.
    call_error = std::max(call_error, std::fabs(hc[i] - c) / std::max(s, x));
    put_error = std::max(put_error, std::fabs(hp[i] - p) / std::max(s, x));
  }
  bool ok = call_error <= 1e-5 && put_error <= 1e-5;
  std::printf("black_scholes: %lld options, call and put in one kernel on %s: first call %.1f ms "
              "(incl. compile), warm call %.3f ms; max error call %.2e, put %.2e %s\n",
              static_cast<long long>(n), runtime.on_gpu() ? "the GPU" : "the CPU fallback",
              first_ms, warm_ms, call_error, put_error, ok ? "OK" : "FAILED (limit 1e-5)");
  return ok ? 0 : 1;
}
