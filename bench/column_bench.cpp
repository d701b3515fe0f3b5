// Where the time of a column reduction goes (issue 3: sum(x, 0) of 4096 x
// 8192 float32 at >= 80% of copy bandwidth). Times, with CUDA events
// (warm-up, median of 50), the DSL's one-kernel sum(x, 0), the generated
// two-pass kernels together and apart (with other slice counts), and
// hand-written alternatives, each checked against a float64 host sum:
//
//   ./column_bench [--rows 4096] [--cols 8192] [--out column.json]
//
// An experiment, not a test: it reports, never asserts a time.
#include "bench/bench_util.hpp"
#include "codegen/reduction.hpp"
#include "codegen/reduction_emitter.hpp"
#include "dsl/gpukit.hpp"

#include <fmt/format.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

using namespace gpukit;

namespace {

// Hand-written references for the generated column kernels: 32 lanes x 8
// row groups (a warp reads 512 contiguous bytes of one row, the block 8
// rows), slices combined in order by a second kernel or, in tiled_fused, by
// the block that finishes a column block last.
constexpr const char* kTiled = R"(
template <typename T, int N> struct __align__(sizeof(T) * N) gk_pack { T v[N]; };

// The block's sum of its slice of rows for this lane's 4 columns (valid in
// warp 0): U = 4 packs in flight per lane, then the 8 row groups in order.
__device__ __forceinline__ gk_pack<float, 4> tile_sum(const float* __restrict__ x, long long rows, long long cols,
                                                      long long splits, long long col, long long z) {
  const long long per = (rows + splits - 1) / splits;
  const long long begin = z * per;
  const long long end = begin + per < rows ? begin + per : rows;
  const int g = threadIdx.x >> 5;
  float acc[4] = {0, 0, 0, 0};
  long long r = begin + g;
  for (; r + 24 < end; r += 32) {
    gk_pack<float, 4> p[4];
    #pragma unroll
    for (int u = 0; u < 4; ++u)
      p[u] = *reinterpret_cast<const gk_pack<float, 4>*>(x + (r + 8 * u) * cols + col);
    #pragma unroll
    for (int u = 0; u < 4; ++u)
      #pragma unroll
      for (int k = 0; k < 4; ++k)
        acc[k] += p[u].v[k];
  }
  for (; r < end; r += 8) {
    gk_pack<float, 4> p = *reinterpret_cast<const gk_pack<float, 4>*>(x + r * cols + col);
    #pragma unroll
    for (int k = 0; k < 4; ++k)
      acc[k] += p.v[k];
  }
  __shared__ gk_pack<float, 4> smem[8][32];
  smem[g][threadIdx.x & 31] = gk_pack<float, 4>{{acc[0], acc[1], acc[2], acc[3]}};
  __syncthreads();
  gk_pack<float, 4> s = smem[0][threadIdx.x & 31];
  #pragma unroll
  for (int j = 1; j < 8; ++j)
    #pragma unroll
    for (int k = 0; k < 4; ++k)
      s.v[k] += smem[j][threadIdx.x & 31].v[k];
  return s;
}

extern "C" __global__ void __launch_bounds__(256)
tiled_partial(const float* __restrict__ x, float* __restrict__ partials, long long rows, long long cols,
              long long splits) {
  const long long xblocks = cols / 128;
  const long long col = (blockIdx.x % xblocks) * 128 + (threadIdx.x & 31) * 4;
  const long long z = blockIdx.x / xblocks;
  gk_pack<float, 4> s = tile_sum(x, rows, cols, splits, col, z);
  if (threadIdx.x < 32)
    *reinterpret_cast<gk_pack<float, 4>*>(partials + z * cols + col) = s;
}

extern "C" __global__ void __launch_bounds__(256)
tiled_combine(const float* __restrict__ partials, float* __restrict__ out, long long cols, long long splits) {
  const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols)
    return;
  float acc = partials[c];
  #pragma unroll 8
  for (long long s = 1; s < splits; ++s)
    acc += partials[s * cols + c];
  out[c] = acc;
}

// One kernel: the last block of each column block (a counter per column
// block, reset by that block for the next launch) adds the slices in order.
extern "C" __global__ void __launch_bounds__(256)
tiled_fused(const float* __restrict__ x, float* __restrict__ partials, float* __restrict__ out,
            unsigned* __restrict__ counters, long long rows, long long cols, long long splits) {
  const long long xblocks = cols / 128;
  const long long xb = blockIdx.x % xblocks;
  const long long col = xb * 128 + (threadIdx.x & 31) * 4;
  const long long z = blockIdx.x / xblocks;
  __shared__ bool last;
  gk_pack<float, 4> mine = tile_sum(x, rows, cols, splits, col, z);
  if (threadIdx.x < 32) {
    *reinterpret_cast<gk_pack<float, 4>*>(partials + z * cols + col) = mine;
    __threadfence();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(&counters[xb], 1u) == splits - 1;
  __syncthreads();
  if (!last || threadIdx.x >= 32)
    return;
  __threadfence();
  gk_pack<float, 4> s;
  for (long long q = 0; q < splits; ++q) {
    const volatile float* p = partials + q * cols + col;
    #pragma unroll
    for (int k = 0; k < 4; ++k)
      s.v[k] = q == 0 ? p[k] : s.v[k] + p[k];
  }
  *reinterpret_cast<gk_pack<float, 4>*>(out + col) = s;
  if (threadIdx.x == 0)
    counters[xb] = 0;
}
)";

struct Result {
  std::string name;
  double ms;
  double max_rel_error;
};

} // namespace

int main(int argc, char** argv) {
  int64_t rows = 4096, cols = 8192;
  std::string out_path;
  for (int k = 1; k + 1 < argc; ++k) {
    if (std::strcmp(argv[k], "--rows") == 0)
      rows = std::atoll(argv[k + 1]);
    if (std::strcmp(argv[k], "--cols") == 0)
      cols = std::atoll(argv[k + 1]);
    if (std::strcmp(argv[k], "--out") == 0)
      out_path = argv[k + 1];
  }
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.on_gpu()) {
    fmt::print("no GPU ({})\n", runtime.fallback_reason());
    return 0;
  }
  const unsigned sms = static_cast<unsigned>(runtime.device()->sm_count);
  rt::EventTimer timer(runtime);
  auto x = Array<float>::random({rows, cols}, 7, -1, 1).named("x");
  std::vector<float> hx = x.to_host();
  std::vector<double> ref(cols, 0.0), mag(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      ref[c] += hx[r * cols + c];
      mag[c] += std::abs(hx[r * cols + c]);
    }
  Array<float> out(Shape({cols}));
  auto poison = [&] { out = std::numeric_limits<float>::quiet_NaN(); };
  auto error = [&] {
    std::vector<float> h = out.to_host();
    double worst = 0;
    for (int64_t c = 0; c < cols; ++c) {
      double e = std::abs(h[c] - ref[c]) / (mag[c] + 1e-30);
      worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
    }
    return worst;
  };
  std::vector<Result> results;
  auto measure = [&](const std::string& name, const std::function<void()>& work, bool check = true) {
    if (check)
      poison();
    work();
    double e = check ? error() : 0;
    double ms = bench::median_ms(timer, work, 50, 5);
    results.push_back({name, ms, e});
  };

  Array<float> copy_dst(Shape({rows, cols}));
  measure("copy (ceiling, read+write)", [&] {
    runtime.copy_device_to_device(copy_dst.allocation(), x.allocation(), x.bytes());
  }, false);

  measure("dsl sum(x, 0) (one kernel)", [&] { out = sum(x, 0); });

  // The generated kernels of the two-pass form, launched by hand: together,
  // apart, and with other slice counts.
  ir::ReductionPlan plan;
  {
    ir::Program body;
    body.add_output("v", DType::Float32, body.add_input("x", DType::Float32));
    ir::add_stage(plan, ir::ReduceOp::Sum, body, DType::Float32);
  }
  codegen::ReductionEmitOptions two_pass;
  two_pass.kind = codegen::ReductionKind::Column;
  two_pass.fuse_column = false;
  codegen::ReductionKernels ks = codegen::emit_reduction(plan, two_pass);
  RawKernel partial(ks.kernels[0].cuda.source, ks.kernels[0].cuda.name, codegen::generated_kernel_options());
  RawKernel combine(ks.kernels[1].cuda.source, ks.kernels[1].cuda.name, codegen::generated_kernel_options());
  const long long xblocks = codegen::column_blocks(cols, 4);
  unsigned dsl_splits = codegen::column_splits(1, rows, cols, sms, 4);
  for (unsigned splits : {dsl_splits, 16u}) {
    Array<float> parts(Shape({static_cast<int64_t>(splits), cols}));
    unsigned grid = static_cast<unsigned>(xblocks * splits);
    measure(fmt::format("two-pass partial+combine, {} slices of {} rows", splits, (rows + splits - 1) / splits), [&] {
      partial.launch(grid, 256, x, parts, 1LL, (long long)rows, (long long)cols);
      combine.launch(static_cast<unsigned>((cols + 255) / 256), 256, parts, out, (long long)cols,
                     (long long)splits, (long long)rows);
    });
    measure(fmt::format("  partial alone ({} slices)", splits), [&] {
      partial.launch(grid, 256, x, parts, 1LL, (long long)rows, (long long)cols);
    }, false);
  }

  // The generated one-kernel form, launched by hand (no host work in the
  // timed window beyond the launch), with other slice counts.
  codegen::ReductionEmitOptions one_pass = two_pass;
  one_pass.fuse_column = true;
  codegen::ReductionKernels fused_ks = codegen::emit_reduction(plan, one_pass);
  RawKernel fused(fused_ks.kernels[0].cuda.source, fused_ks.kernels[0].cuda.name, codegen::generated_kernel_options());
  Array<int32_t> fused_counters = Array<int32_t>::full({xblocks}, 0);
  for (unsigned splits : {5u, 8u, 16u}) {
    Array<float> parts(Shape({static_cast<int64_t>(splits), cols}));
    unsigned grid = static_cast<unsigned>(xblocks * splits);
    measure(fmt::format("generated one kernel by hand, {} slices", splits), [&] {
      fused.launch(grid, 256, x, parts, fused_counters, out, 1LL, (long long)rows, (long long)cols);
    });
  }

  RawKernel tiled_partial(kTiled, "tiled_partial"), tiled_combine(kTiled, "tiled_combine"),
      tiled_fused(kTiled, "tiled_fused");
  Array<int32_t> counters = Array<int32_t>::full({cols / 128}, 0);
  for (long long splits : {4LL, 8LL}) {
    Array<float> parts(Shape({static_cast<int64_t>(splits), cols}));
    unsigned grid = static_cast<unsigned>(cols / 128 * splits);
    measure(fmt::format("tiled 32x8, {} slices: partial+combine", splits), [&] {
      tiled_partial.launch(grid, 256, x, parts, (long long)rows, (long long)cols, splits);
      tiled_combine.launch(static_cast<unsigned>((cols + 255) / 256), 256, parts, out, (long long)cols, splits);
    });
    measure(fmt::format("  tiled partial alone ({} slices)", splits), [&] {
      tiled_partial.launch(grid, 256, x, parts, (long long)rows, (long long)cols, splits);
    }, false);
    measure(fmt::format("tiled 32x8, {} slices: one fused kernel", splits), [&] {
      tiled_fused.launch(grid, 256, x, parts, out, counters, (long long)rows, (long long)cols, splits);
    });
  }

  double copy_ms = results.front().ms;
  double bytes = double(rows) * cols * 4;
  llvm::json::Array json;
  fmt::print("column sum of {} x {} float32 ({} SMs); % is of the copy's bandwidth (read+write bytes)\n", rows,
             cols, sms);
  for (const Result& r : results) {
    double moved = r.name.starts_with("copy") ? 2 * bytes : bytes;
    double pct = 100.0 * (moved / r.ms) / (2 * bytes / copy_ms);
    fmt::print("{:<52} {:8.4f} ms {:6.1f}%  max rel err {:.2e}\n", r.name, r.ms, pct, r.max_rel_error);
    json.push_back(llvm::json::Object{{"name", r.name}, {"ms", r.ms}, {"percent_of_copy", pct},
                                      {"max_rel_error", r.max_rel_error}});
  }
  if (!out_path.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(out_path, ec);
    os << llvm::json::Value(std::move(json)) << "\n";
  }
  return 0;
}
