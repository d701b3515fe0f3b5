// Black-Scholes option pricing through the C++ DSL: what `gpukit demo` runs,
// and the C++ twin of examples/black_scholes.gk (same inputs, same formula),
// with a float64 host reference to check both against.
//
//   BlackScholes bs(1 << 20, /*seed=*/1);
//   bs.price();                       // call and put, one kernel
//   double err = bs.max_error();      // against the float64 reference
//
// Inputs are those of the CUDA samples' BlackScholes: price S in [5, 30),
// strike K in [1, 100), years T in [0.25, 10), rate 0.02, volatility 0.30;
// S, K and T are drawn with seeds seed, seed + 1 and seed + 2, as
// `gpukit run examples/black_scholes.gk --seed SEED` draws them.
#pragma once

#include "dsl/gpukit.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpukit::cli {

class BlackScholes {
public:
  static constexpr float kRate = 0.02f;
  static constexpr float kVolatility = 0.30f;

  BlackScholes(int64_t n, uint64_t seed)
      : S(Array<float>::random({n}, seed, 5.0, 30.0).named("S")),
        K(Array<float>::random({n}, seed + 1, 1.0, 100.0).named("K")),
        T(Array<float>::random({n}, seed + 2, 0.25, 10.0).named("T")), Call(S.shape()),
        Put(S.shape()) {
    Call.named("call");
    Put.named("put");
  }

  /// The formula, as examples/black_scholes.cpp and examples/black_scholes.gk write it.
  auto expressions() const {
    const float r = kRate, v = kVolatility;
    auto sqrt_t = sqrt(T);
    auto d1 = (log(S / K) + (r + 0.5f * v * v) * T) / (v * sqrt_t);
    auto d2 = d1 - v * sqrt_t;
    auto discount = K * exp(-r * T);
    auto cnd = [](const auto& d) { return 0.5f * (1.0f + erf(d * 0.70710678118654752f)); };
    auto call = S * cnd(d1) - discount * cnd(d2);
    auto put = discount * cnd(-d2) - S * cnd(-d1);
    return std::make_pair(call, put);
  }

  /// Prices every option: call and put in one generated kernel.
  void price() {
    auto [call, put] = expressions();
    assign(Call, call, Put, put);
  }

  /// The CUDA source price() runs.
  std::string source() {
    auto [call, put] = expressions();
    return inspect(Call, call, Put, put).source;
  }

  /// The largest |price - reference| over every option (prices are up to ~100).
  double max_error() const {
    std::vector<float> s = S.to_host(), k = K.to_host(), t = T.to_host();
    std::vector<float> c = Call.to_host(), p = Put.to_host();
    double worst = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      double call, put;
      reference(s[i], k[i], t[i], call, put);
      worst = std::max({worst, std::abs(c[i] - call), std::abs(p[i] - put)});
    }
    return worst;
  }

  static void reference(double s, double k, double t, double& call, double& put) {
    double r = kRate, v = kVolatility;
    double sqrt_t = std::sqrt(t);
    double d1 = (std::log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t);
    double d2 = d1 - v * sqrt_t;
    auto cnd = [](double d) { return 0.5 + 0.5 * std::erf(d * M_SQRT1_2); };
    double discount = k * std::exp(-r * t);
    call = s * cnd(d1) - discount * cnd(d2);
    put = discount * cnd(-d2) - s * cnd(-d1);
  }

  const Array<float>& call() const { return Call; }
  const Array<float>& put() const { return Put; }

private:
  Array<float> S, K, T, Call, Put;
};

} // namespace gpukit::cli
