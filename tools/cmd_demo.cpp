// gpukit demo: the README's first command. Prices a million options with
// Black-Scholes through the C++ DSL, checks them against float64, and says
// how long it took.
#include "tools/black_scholes.hpp"
#include "tools/cli.hpp"

#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>

namespace gpukit::cli {

int run_demo() {
  using Clock = std::chrono::steady_clock;
  constexpr int64_t kOptions = 1 << 20;
  constexpr double kTolerance = 1e-3; // absolute, on prices up to ~100 (float32 math)
  llvm::raw_ostream& os = llvm::outs();

  rt::Runtime& runtime = rt::Runtime::get();
  BlackScholes bs(kOptions, /*seed=*/1);
  if (Dump)
    os << bs.source() << "\n";

  auto timed = [&] {
    Clock::time_point t0 = Clock::now();
    bs.price();
    runtime.synchronize();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  double first_ms = timed();
  double second_ms = timed();
  double error = bs.max_error();
  float call0 = bs.call().to_host()[0];
  float put0 = bs.put().to_host()[0];

  os << fmt::format("Black-Scholes: {} options priced on {}\n", kOptions, backend_description());
  os << fmt::format("  call[0] = {:.4f}  put[0] = {:.4f}  max error vs float64 = {:.1e}  {}\n", call0,
                    put0, error, error <= kTolerance ? "OK" : "FAILED");
  os << fmt::format("  {:.2f} ms per run ({:.1f} ms for the first, which builds the kernel)\n",
                    second_ms, first_ms);
  if (error > kTolerance)
    throw Error(ErrorKind::Internal,
                fmt::format("demo: the prices differ from the float64 reference by {:.3g} (tolerance {})",
                            error, kTolerance));
  return 0;
}

} // namespace gpukit::cli
