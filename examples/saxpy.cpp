// saxpy: out = 2 * x + sin(y) over 2^24 floats, as one generated kernel.
// Checks the answer against a float64 host computation (exit 1 if it is
// off), prints the time of the first call (which builds and compiles the
// kernel) and of a warm call. `saxpy --dump` also prints the CUDA source.
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

} // namespace

int main(int argc, char** argv) {
  bool dump = argc > 1 && std::string_view(argv[1]) == "--dump";
  using gpukit::Array;
  gpukit::rt::Runtime& runtime = gpukit::rt::Runtime::get();

  const int64_t n = int64_t(1) << 24;
  auto x = Array<float>::random({n}, /*seed=*/1, -1.0, 1.0).named("x");
  auto y = Array<float>::random({n}, /*seed=*/2, -1.0, 1.0).named("y");
  Array<float> out(x.shape());
  out.named("out");

  auto start = std::chrono::steady_clock::now();
  out = 2.0f * x + sin(y);
  runtime.synchronize();
  double first_ms = milliseconds_since(start);

  double warm_ms = 1e30;
  for (int k = 0; k < 3; ++k) {
    start = std::chrono::steady_clock::now();
    out = 2.0f * x + sin(y);
    runtime.synchronize();
    warm_ms = std::min(warm_ms, milliseconds_since(start));
  }
  if (dump)
    std::printf("%s\n", gpukit::source_of(out, 2.0f * x + sin(y)).c_str());

  std::vector<float> hx = x.to_host(), hy = y.to_host(), ho = out.to_host();
  double max_error = 0;
  for (int64_t i = 0; i < n; ++i) {
    double ref = 2.0 * hx[i] + std::sin(static_cast<double>(hy[i]));
    max_error = std::max(max_error, std::fabs(ho[i] - ref) / std::max(1.0, std::fabs(ref)));
  }
  bool ok = max_error <= 1e-6;
  double gbps = 3.0 * n * sizeof(float) / (warm_ms * 1e6);
  std::printf("saxpy: n = %lld on %s: first call %.1f ms (incl. compile), warm call %.3f ms "
              "(%.1f GB/s); max rel error %.2e %s\n",
              static_cast<long long>(n), runtime.on_gpu() ? "the GPU" : "the CPU fallback",
              first_ms, warm_ms, gbps, max_error, ok ? "OK" : "FAILED (limit 1e-6)");
  return ok ? 0 : 1;
}
