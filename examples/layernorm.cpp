// LayerNorm in one kernel: mean and variance (two passes over the row, on
// chip), then (x - mean) / sqrt(var + eps) * gamma + beta with gamma and
// beta of shape [cols]. Checked against a float64 host computation.
//
//   ./layernorm [--dump]   (--dump prints the plan and the kernel)
#include "dsl/gpukit.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  using namespace gpukit;
  const int64_t rows = 256, cols = 2048;
  auto x = Array<float>::random({rows, cols}, 1, -3.0, 5.0).named("x");
  auto gamma = Array<float>::random({cols}, 2, 0.5, 1.5).named("gamma");
  auto beta = Array<float>::random({cols}, 3, -1.0, 1.0).named("beta");
  Array<float> out({rows, cols});
  if (argc > 1 && std::string_view(argv[1]) == "--dump") {
    // The plan (stages, epilogue, kernels) and the CUDA, built but not run.
    KernelInfo info = inspect(out, (x - mean(x, 1)) * rsqrt(var(x, 1) + 1e-5f) * gamma + beta);
    std::printf("%s\n%s", info.ir.c_str(), info.source.c_str());
  }
  out = (x - mean(x, 1)) * rsqrt(var(x, 1) + 1e-5f) * gamma + beta;

  std::vector<float> hx = x.to_host(), hg = gamma.to_host(), hb = beta.to_host(), ho = out.to_host();
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c)
      m += hx[r * cols + c];
    m /= cols;
    for (int64_t c = 0; c < cols; ++c)
      v += (hx[r * cols + c] - m) * (hx[r * cols + c] - m);
    v /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      double ref = (hx[r * cols + c] - m) / std::sqrt(v + 1e-5) * hg[c] + hb[c];
      worst = std::fmax(worst, std::abs(ho[r * cols + c] - ref));
    }
  }
  std::printf("layernorm %lldx%lld: max abs error %.3g vs float64\n", (long long)rows, (long long)cols, worst);
  return worst < 1e-4 ? 0 : 1;
}
