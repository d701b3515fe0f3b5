#include "dsl/tune_bench.hpp"

#include "codegen/kernel_abi.hpp"
#include "dsl/text/host_array.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler/gpu_backend.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace gpukit::detail {

namespace {

/// The comparison kernels: one per element width, told by `kind` how to
/// read the bits (0: exactly, 1: f16, 2: bf16, 3: f32, 4: f64). `poison`
/// fills `got` with 0xA5 bytes instead (a normal, improbable value in every
/// floating type, not 0/1 for bool), so an element a candidate fails to
/// write cannot pass for the default's.
constexpr const char* kCheckSource = R"(// gpukit tuning: poison or compare one output
__device__ double gk_tune_value(unsigned long long bits, int kind) {
  if (kind == 1) {
    float f;
    unsigned short h = (unsigned short)bits;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  }
  if (kind == 2) return __uint_as_float(((unsigned)bits) << 16);
  if (kind == 3) return __uint_as_float((unsigned)bits);
  return __longlong_as_double((long long)bits);
}

template <typename T>
__device__ void gk_tune_check(T* got, const T* want, unsigned long long n, int kind, double tol,
                              int poison, unsigned long long* result) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (poison) {
      got[i] = (T)0xA5A5A5A5A5A5A5A5ull;
      continue;
    }
    const T g = got[i], w = want[i];
    if (g == w) continue;
    if (kind != 0) {
      const double a = gk_tune_value(g, kind), b = gk_tune_value(w, kind);
      if (a != a && b != b) continue;
      if (fabs(a - b) <= tol * fmax(1.0, fabs(b))) continue;
    }
    atomicAdd(&result[0], 1ull);
    atomicMin(&result[1], i);
  }
}

#define GK_TUNE_CHECK(name, T)                                                                   \
  extern "C" __global__ void name(T* got, const T* want, unsigned long long n, int kind,        \
                                  double tol, int poison, unsigned long long* result) {         \
    gk_tune_check<T>(got, want, n, kind, tol, poison, result);                                   \
  }
GK_TUNE_CHECK(gk_tune_check_1, unsigned char)
GK_TUNE_CHECK(gk_tune_check_2, unsigned short)
GK_TUNE_CHECK(gk_tune_check_4, unsigned int)
GK_TUNE_CHECK(gk_tune_check_8, unsigned long long)
)";

int check_kind(DType t) {
  switch (t) {
  case DType::Bool:
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64: return 0;
  case DType::Float16: return 1;
  case DType::BFloat16: return 2;
  case DType::Float32: return 3;
  case DType::Float64: return 4;
  }
  return 0;
}

/// 8 ulps of `t` (relative, and absolute below 1): candidates differ from
/// the default only by the order of independent element computations, so
/// they should agree exactly; the margin admits a compiler's different
/// instruction choice, never a wrong element.
double tolerance(DType t) {
  switch (t) {
  case DType::Float16: return 8 * std::ldexp(1.0, -10);
  case DType::BFloat16: return 8 * std::ldexp(1.0, -7);
  case DType::Float32: return 8 * std::ldexp(1.0, -23);
  case DType::Float64: return 8 * std::ldexp(1.0, -52);
  case DType::Bool:
  case DType::UInt8:
  case DType::Int32:
  case DType::Int64: return 0;
  }
  return 0;
}

/// Random inputs in a range every operation is defined on (positive, so
/// sqrt and log give numbers, not NaNs that would hide differences).
std::pair<double, double> input_range(DType t) {
  switch (t) {
  case DType::Bool: return {0.0, 1.0};
  case DType::UInt8: return {0.0, 256.0};
  case DType::Int32:
  case DType::Int64: return {-1000.0, 1000.0};
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32:
  case DType::Float64: return {0.25, 4.0};
  }
  return {0.0, 1.0};
}

ir::Constant default_scalar(DType t) {
  if (is_floating(t))
    return ir::Constant::of_float(t, 0.5);
  if (t == DType::Bool)
    return ir::Constant::of_int(t, 1);
  return ir::Constant::of_int(t, 3);
}

rt::sched::GpuBackend& gpu() {
  rt::Runtime& runtime = rt::Runtime::get();
  static rt::sched::GpuBackend backend(*runtime.driver(), runtime.context());
  return backend;
}

} // namespace

std::string_view tune_check_source() { return kCheckSource; }

TuneBench::TuneBench(const ir::Program& optimized, uint64_t n, const TuneOptions& options)
    : Program(optimized), N(n) {
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.on_gpu())
    throw Error(ErrorKind::Unavailable,
                fmt::format("tuning needs a GPU: {}", runtime.fallback_reason()));
  const rt::DeviceInfo& device = *runtime.device();

  std::vector<bool> read(Program.inputs().size(), false);
  for (const ir::Node& node : Program.nodes())
    if (node.op == ir::Op::Input)
      read[node.index] = true;
  for (size_t k = 0; k < Program.inputs().size(); ++k)
    if (read[k])
      BytesPerSet += n * size_of(Program.inputs()[k].type);
  uint64_t written = 0;
  for (const ir::Output& o : Program.outputs())
    written += n * size_of(o.type);
  BytesPerSet += written;

  // Enough sets that three times the L2 lies between two uses of one set,
  // within half the device's memory (the reference copy and the user's
  // arrays need room too).
  uint64_t l2 = device.l2_bytes ? device.l2_bytes : (50ull << 20);
  uint64_t footprint = 0;
  for (size_t k = 0; k < Program.inputs().size(); ++k)
    footprint += n * size_of(Program.inputs()[k].type);
  footprint += written;
  uint64_t sets = std::clamp<uint64_t>((3 * l2 + footprint - 1) / std::max<uint64_t>(footprint, 1), 2, 64);
  uint64_t budget = device.total_memory ? device.total_memory / 2 : (8ull << 30);
  while (sets > 1 && sets * footprint + written > budget)
    --sets;

  // Scalars: the caller's values by name, else defaults; each as its parameter's type.
  std::vector<uint64_t> scalar_bits;
  for (const ir::ScalarParam& s : Program.scalars()) {
    auto given = options.scalars.find(s.name);
    ir::Constant value = given != options.scalars.end() ? given->second : default_scalar(s.type);
    uint64_t bits = 0;
    codegen::write_scalar_argument(value, s.type, &bits);
    scalar_bits.push_back(bits);
  }

  try {
    allocate(n, sets, options, scalar_bits);
  } catch (...) {
    release();
    throw;
  }
}

void TuneBench::allocate(uint64_t n, uint64_t sets, const TuneOptions& options,
                         const std::vector<uint64_t>& scalar_bits) {
  rt::Runtime& runtime = rt::Runtime::get();
  rt::DeviceAllocator& allocator = runtime.allocator();
  Sets.resize(sets);
  for (Set& set : Sets) {
    for (const ir::Operand& in : Program.inputs())
      set.inputs.push_back(allocator.allocate(std::max<uint64_t>(1, n * size_of(in.type))));
    for (const ir::Output& out : Program.outputs())
      set.outputs.push_back(allocator.allocate(std::max<uint64_t>(1, n * size_of(out.type))));
    for (rt::Allocation a : set.inputs)
      set.slots.push_back(a.address);
    for (rt::Allocation a : set.outputs)
      set.slots.push_back(a.address);
    set.slots.insert(set.slots.end(), scalar_bits.begin(), scalar_bits.end());
    set.slots.push_back(n); // `unsigned` or `unsigned long long`: little-endian low bytes
    for (uint64_t& slot : set.slots)
      set.args.push_back(&slot);
  }
  for (const ir::Output& out : Program.outputs())
    Reference.push_back(allocator.allocate(std::max<uint64_t>(1, n * size_of(out.type))));
  Result = allocator.allocate(2 * sizeof(uint64_t));

  for (size_t k = 0; k < Program.inputs().size(); ++k) {
    DType t = Program.inputs()[k].type;
    text::HostArray host = text::HostArray::zeros(t, {static_cast<int64_t>(n)});
    auto [lo, hi] = input_range(t);
    host.fill_random(options.seed + k, lo, hi);
    runtime.copy_to_device(Sets[0].inputs[k], host.data.data(), host.data.size());
    for (size_t s = 1; s < Sets.size(); ++s)
      runtime.copy_device_to_device(Sets[s].inputs[k], Sets[0].inputs[k], host.data.size());
  }

  unsigned timed = std::max(options.repetitions, 1u);
  for (unsigned r = 0; r < timed; ++r) {
    Starts.push_back(gpu().create_event(true));
    Stops.push_back(gpu().create_event(true));
  }
  CheckKernels.assign(4, nullptr);
  runtime.synchronize();
}

TuneBench::~TuneBench() { release(); }

void TuneBench::release() noexcept {
  rt::Runtime& runtime = rt::Runtime::get();
  try {
    // Nothing may still use the buffers when they return to the pool.
    runtime.synchronize();
    for (CUevent e : Starts)
      gpu().destroy_event(e);
    for (CUevent e : Stops)
      gpu().destroy_event(e);
    rt::DeviceAllocator& allocator = runtime.allocator();
    for (Set& set : Sets) {
      for (rt::Allocation a : set.inputs)
        allocator.deallocate(a);
      for (rt::Allocation a : set.outputs)
        allocator.deallocate(a);
    }
    for (rt::Allocation a : Reference)
      allocator.deallocate(a);
    if (Result)
      allocator.deallocate(Result);
  } catch (...) {
    // A failing driver at this point has already been reported by the
    // call that failed; a destructor must not throw.
  }
  Starts.clear();
  Stops.clear();
  Sets.clear();
  Reference.clear();
  Result = {};
}

void TuneBench::launch(const rt::Kernel& kernel, unsigned grid, unsigned block, unsigned set) {
  rt::Runtime::get().launch(kernel, {grid, block, 0}, Sets[set].args.data());
}

void TuneBench::keep_reference() {
  rt::Runtime& runtime = rt::Runtime::get();
  for (size_t k = 0; k < Reference.size(); ++k)
    runtime.copy_device_to_device(Reference[k], Sets[0].outputs[k], Reference[k].bytes);
  runtime.synchronize();
}

const rt::Kernel& TuneBench::check_kernel(unsigned element_bytes) {
  unsigned slot = static_cast<unsigned>(std::countr_zero(element_bytes));
  if (!CheckKernels[slot]) {
    std::string name = fmt::format("gk_tune_check_{}", element_bytes);
    CheckKernels[slot] = &rt::Runtime::get().kernels().get({name, kCheckSource});
  }
  return *CheckKernels[slot];
}

void TuneBench::run_check(unsigned output, bool poison) {
  rt::Runtime& runtime = rt::Runtime::get();
  DType t = Program.outputs()[output].type;
  uint64_t got = Sets[0].outputs[output].address, want = Reference[output].address;
  uint64_t n = N;
  int kind = check_kind(t);
  double tol = tolerance(t);
  int poison_flag = poison ? 1 : 0;
  uint64_t result = Result.address;
  void* args[] = {&got, &want, &n, &kind, &tol, &poison_flag, &result};
  unsigned sms = static_cast<unsigned>(std::max(runtime.device()->sm_count, 1));
  unsigned grid = static_cast<unsigned>(std::clamp<uint64_t>((N + 255) / 256, 1, 8ull * sms));
  runtime.launch(check_kernel(size_of(t)), {grid, 256, 0}, args);
}

std::string TuneBench::verify(const rt::Kernel& kernel, unsigned grid, unsigned block) {
  rt::Runtime& runtime = rt::Runtime::get();
  for (unsigned k = 0; k < Program.outputs().size(); ++k)
    run_check(k, /*poison=*/true);
  launch(kernel, grid, block, 0);
  for (unsigned k = 0; k < Program.outputs().size(); ++k) {
    uint64_t init[2] = {0, ~uint64_t(0)};
    runtime.copy_to_device(Result, init, sizeof(init));
    run_check(k, /*poison=*/false);
    uint64_t found[2] = {0, 0};
    runtime.copy_to_host(found, Result, sizeof(found));
    if (found[0] == 0)
      continue;
    const ir::Output& out = Program.outputs()[k];
    unsigned bytes = size_of(out.type);
    text::HostArray got = text::HostArray::zeros(out.type, {1});
    text::HostArray want = text::HostArray::zeros(out.type, {1});
    runtime.copy_to_host(got.data.data(), {Sets[0].outputs[k].address + found[1] * bytes, bytes}, bytes);
    runtime.copy_to_host(want.data.data(), {Reference[k].address + found[1] * bytes, bytes}, bytes);
    return fmt::format("output {} differs from the default's at {} of {} elements (first at {}: {} "
                       "instead of {})",
                       out.name, found[0], N, found[1], got.get(0), want.get(0));
  }
  return "";
}

BenchTiming TuneBench::time(const rt::Kernel& kernel, unsigned grid, unsigned block,
                            unsigned warmup, unsigned repetitions, unsigned check,
                            double give_up_ms) {
  rt::Runtime& runtime = rt::Runtime::get();
  repetitions = std::clamp<unsigned>(repetitions, 1, static_cast<unsigned>(Starts.size()));
  check = std::clamp<unsigned>(check, 1, repetitions);
  auto next_set = [&] {
    unsigned s = NextSet;
    NextSet = (NextSet + 1) % Sets.size();
    return s;
  };
  for (unsigned w = 0; w < warmup; ++w)
    launch(kernel, grid, block, next_set());
  auto enqueue = [&](unsigned from, unsigned to) {
    for (unsigned r = from; r < to; ++r) {
      gpu().record(Starts[r], runtime.stream());
      launch(kernel, grid, block, next_set());
      gpu().record(Stops[r], runtime.stream());
    }
  };
  auto median_of = [&](unsigned count) {
    gpu().wait(Stops[count - 1]);
    std::vector<double> ms;
    for (unsigned r = 0; r < count; ++r)
      ms.push_back(std::chrono::duration<double, std::milli>(gpu().elapsed(Starts[r], Stops[r])).count());
    std::sort(ms.begin(), ms.end());
    return count % 2 ? ms[count / 2] : 0.5 * (ms[count / 2 - 1] + ms[count / 2]);
  };

  BenchTiming t;
  enqueue(0, check);
  double early = median_of(check);
  if (check < repetitions && give_up_ms > 0 && early > give_up_ms) {
    t.median_ms = early;
    t.repetitions = check;
    t.stopped_early = true;
    return t;
  }
  enqueue(check, repetitions);
  t.median_ms = median_of(repetitions);
  t.repetitions = repetitions;
  return t;
}

} // namespace gpukit::detail
