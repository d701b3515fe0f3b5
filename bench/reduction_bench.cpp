// Reduction benchmarks on the GPU (issue 3's targets, H100):
//   sum(a * b) over 2^26 float32             >= 90% of copy bandwidth
//   softmax, layernorm on 8192 x 4096 float32 >= 85% (one read + one write)
//   column sum of 4096 x 8192 float32         >= 80%
// Each is timed with CUDA events: warm-up, then the median of 50 runs. The
// ceiling is a device-to-device copy of 2^26 floats (read + write bytes).
//
//   ./reduction_bench --out results.json
//
// Without a GPU it prints "no GPU" and exits 0. Reports, never asserts.
#include "dsl/gpukit.hpp"
#include "runtime/driver_api.hpp"

#include <fmt/format.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

using namespace gpukit;

namespace {

double median_ms(const std::function<void()>& f) {
  rt::Runtime& runtime = rt::Runtime::get();
  const rt::DriverApi& api = *runtime.driver();
  CUevent start, stop;
  rt::check(api.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  rt::check(api.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int k = 0; k < 5; ++k)
    f();
  runtime.synchronize();
  std::vector<double> times;
  for (int k = 0; k < 50; ++k) {
    rt::check(api.cuEventRecord(start, runtime.stream()), "cuEventRecord");
    f();
    rt::check(api.cuEventRecord(stop, runtime.stream()), "cuEventRecord");
    rt::check(api.cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    rt::check(api.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    times.push_back(ms);
  }
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  std::string out_path;
  for (int k = 1; k + 1 < argc; ++k)
    if (std::strcmp(argv[k], "--out") == 0)
      out_path = argv[k + 1];
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.on_gpu()) {
    fmt::print("no GPU ({})\n", runtime.fallback_reason());
    return 0;
  }
  struct Row {
    std::string name;
    double bytes, ms;
  };
  std::vector<Row> rows;

  const int64_t n = int64_t(1) << 26;
  auto a = Array<float>::random({n}, 1);
  auto b = Array<float>::random({n}, 2);
  Array<float> copy_dst{Shape(n)};
  rows.push_back({"copy 2^26 f32 (ceiling)", 2.0 * n * 4, median_ms([&] {
                    runtime.copy_device_to_device(copy_dst.allocation(), a.allocation(), n * 4);
                  })});
  Array<float> s{Shape(1)};
  rows.push_back({"sum(a*b) 2^26 f32", 2.0 * n * 4, median_ms([&] { s = sum(a * b); })});

  auto x = Array<float>::random({8192, 4096}, 3);
  auto g = Array<float>::random({4096}, 4);
  auto bias = Array<float>::random({4096}, 5);
  Array<float> y({8192, 4096});
  const double rw = 2.0 * 8192 * 4096 * 4;
  rows.push_back({"softmax 8192x4096 f32", rw,
                  median_ms([&] { y = exp(x - amax(x, 1)) / sum(exp(x - amax(x, 1)), 1); })});
  rows.push_back({"layernorm 8192x4096 f32", rw,
                  median_ms([&] { y = (x - mean(x, 1)) * rsqrt(var(x, 1) + 1e-5f) * g + bias; })});
  auto c = Array<float>::random({4096, 8192}, 6);
  Array<float> cs{Shape(8192)};
  rows.push_back({"column sum 4096x8192 f32", 4096.0 * 8192 * 4, median_ms([&] { cs = sum(c, 0); })});

  double ceiling = rows[0].bytes / (rows[0].ms * 1e-3) / 1e9;
  fmt::print("{:<28} {:>10} {:>10} {:>8}\n", "benchmark", "ms", "GB/s", "% copy");
  llvm::json::Array results;
  for (const Row& r : rows) {
    double gbs = r.bytes / (r.ms * 1e-3) / 1e9;
    fmt::print("{:<28} {:>10.4f} {:>10.1f} {:>7.1f}%\n", r.name, r.ms, gbs, 100.0 * gbs / ceiling);
    results.push_back(llvm::json::Object{{"name", r.name}, {"ms", r.ms}, {"gb_per_s", gbs},
                                         {"percent_of_copy", 100.0 * gbs / ceiling}});
  }
  if (!out_path.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(out_path, ec);
    if (ec) {
      fmt::print(stderr, "cannot write {}: {}\n", out_path, ec.message());
      return 1;
    }
    os << llvm::json::Value(llvm::json::Object{{"device", runtime.device() ? runtime.device()->name : ""},
                                               {"results", std::move(results)}});
  }
  return 0;
}
