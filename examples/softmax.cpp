// Row softmax in one kernel: the row's maximum and sum are computed on chip
// and the row is written once. Checked against a float64 host computation.
//
//   ./softmax [--dump]   (--dump prints the plan and the kernel)
#include "dsl/gpukit.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  using namespace gpukit;
  const int64_t rows = 512, cols = 1024;
  auto x = Array<float>::random({rows, cols}, 42, -8.0, 8.0).named("x");
  Array<float> out({rows, cols});
  if (argc > 1 && std::string_view(argv[1]) == "--dump") {
    // The plan (stages, epilogue, kernels) and the CUDA, built but not run.
    KernelInfo info = inspect(out, exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1));
    std::printf("%s\n%s", info.ir.c_str(), info.source.c_str());
  }
  out = exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1);

  std::vector<float> hx = x.to_host(), ho = out.to_host();
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c)
      m = std::fmax(m, hx[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      s += std::exp(hx[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c)
      worst = std::fmax(worst, std::abs(ho[r * cols + c] - std::exp(hx[r * cols + c] - m) / s));
  }
  std::printf("softmax %lldx%lld: max abs error %.3g vs float64\n", (long long)rows, (long long)cols, worst);
  return worst < 1e-6 ? 0 : 1;
}
