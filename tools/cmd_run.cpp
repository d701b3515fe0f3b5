// gpukit run and gpukit bench: a program on the runtime's backend (the GPU,
// or the CPU fallback), with random or .npy inputs.
#include "tools/cli.hpp"

#include "dsl/text/npy.hpp"
#include "dsl/reduction_engine.hpp"
#include "dsl/text/program_runner.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/runtime.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <chrono>

namespace gpukit::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// A program ready to run: lowered, compiled, its inputs made.
struct Prepared {
  text::LoweredProgram lowered;
  text::CompiledProgram compiled;
  std::vector<text::HostArray> inputs;
  size_t n = 0;
};

Prepared prepare() {
  Prepared p;
  std::map<std::string, InputFile> files;
  text::ParsedProgram parsed = load_program();
  text::LowerOptions options = lower_options(&files);
  p.lowered = text::lower(parsed, options);
  print_warnings(p.lowered);
  p.n = static_cast<size_t>(p.lowered.elements());
  p.lowered.check_scalars_bound();
  p.compiled = text::compile_program(
      p.lowered, {.vectorize = true, .index64 = codegen::needs_index64(p.n), .n = p.n});
  if (Dump) {
    if (p.compiled.has_elementwise)
      llvm::outs() << p.compiled.cuda.source << "\n";
    for (const text::CompiledStatement& c : p.compiled.reductions)
      llvm::outs() << text::describe_statement(c) << "\n";
  }
  if (Explain) {
    if (p.compiled.has_elementwise)
      llvm::outs() << fmt::format("kernel {}: {}\n", p.compiled.cuda.name, p.compiled.launch.explain());
    for (const text::CompiledStatement& c : p.compiled.reductions) {
      std::string plan = detail::describe_plan(*c.compiled, c.shape);
      llvm::outs() << fmt::format("{}: {}\n", p.lowered.reductions[c.index].what, plan.substr(0, plan.find('\n')));
    }
  }
  for (const text::ArrayInfo& in : p.lowered.inputs) {
    auto file = files.find(in.name);
    if (file != files.end()) {
      p.inputs.push_back(std::move(file->second.array));
      continue;
    }
    text::HostArray a = text::HostArray::zeros(in.dtype, in.extents);
    a.fill_random(Seed + in.random_index, in.random_lo, in.random_hi);
    p.inputs.push_back(std::move(a));
  }
  return p;
}

/// The program's kernels: "ew_1234abcd", "ew_1234abcd, rd_5678ef01_row".
std::string kernel_names(const text::CompiledProgram& compiled) {
  std::string names = compiled.has_elementwise ? compiled.cuda.name : std::string();
  for (const text::CompiledStatement& c : compiled.reductions)
    for (const codegen::ReductionKernel& k : c.compiled->kernels.kernels)
      names += (names.empty() ? "" : ", ") + k.cuda.name;
  return names;
}

void print_backend(const text::CompiledProgram& compiled, const text::ProgramRunner& runner) {
  if (!Verbose)
    return;
  rt::Runtime& runtime = rt::Runtime::get();
  llvm::raw_ostream& os = llvm::errs();
  if (!runtime.on_gpu()) {
    std::string names = kernel_names(compiled);
    os << fmt::format("backend: CPU fallback ({}); kernel{} {} evaluated, not compiled\n",
                      runtime.fallback_reason(), names.find(',') == std::string::npos ? "" : "s", names);
    return;
  }
  rt::KernelCacheStats s = runtime.kernels().stats();
  os << fmt::format("backend: GPU {} ({})\n", runtime.device()->name, runtime.arch());
  auto describe = [&](const rt::Kernel& k) {
    os << fmt::format("kernel {}: {}\n", k.name,
                      k.from_disk ? std::string("loaded from the disk cache")
                                  : fmt::format("compiled in {:.1f} ms", k.compile_ms));
  };
  if (const rt::Kernel* k = runner.kernel())
    describe(*k);
  for (const text::CompiledStatement& c : runner.loaded_statements())
    for (const rt::Kernel* k : c.compiled->loaded)
      describe(*k);
  os << fmt::format("kernel cache: {} compiled, {} from disk, {} from memory, {} corrupt\n",
                    s.compiles, s.disk_hits, s.memory_hits, s.corrupt_entries);
}

} // namespace

int run_run() {
  // --save names are checked before anything runs.
  std::vector<std::pair<std::string, std::string>> saves;
  for (const std::string& s : SaveFiles)
    saves.push_back(split_binding(s, "save"));
  Prepared p = prepare();
  for (const auto& [name, path] : saves) {
    bool found = std::any_of(p.lowered.outputs.begin(), p.lowered.outputs.end(),
                             [&](const text::ArrayInfo& o) { return o.name == name; });
    if (!found) {
      std::string names;
      for (const text::ArrayInfo& o : p.lowered.outputs)
        names += (names.empty() ? "" : ", ") + o.name;
      throw Error(ErrorKind::Usage,
                  fmt::format("--save {}={}: the program has no output named '{}' (its outputs: {})",
                              name, path, name, names));
    }
  }

  Clock::time_point t0 = Clock::now();
  text::ProgramRunner runner(p.compiled, p.lowered, p.n);
  double setup_ms = ms_since(t0);
  runner.upload(p.inputs);
  t0 = Clock::now();
  runner.launch();
  rt::Runtime::get().synchronize();
  double run_ms = ms_since(t0);
  std::vector<text::HostArray> outputs;
  runner.download(outputs);

  print_backend(p.compiled, runner);
  if (Verbose)
    llvm::errs() << fmt::format("setup {:.1f} ms, run {:.3f} ms\n", setup_ms, run_ms);
  for (size_t k = 0; k < outputs.size(); ++k)
    llvm::outs() << outputs[k].summary(p.lowered.outputs[k].name) << "\n";
  for (const auto& [name, path] : saves) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (p.lowered.outputs[k].name != name)
        continue;
      text::write_npy(path, outputs[k]);
      if (Verbose)
        llvm::errs() << fmt::format("wrote {} to {}\n", name, path);
    }
  }
  return 0;
}

int run_bench() {
  if (Repetitions == 0)
    throw Error(ErrorKind::Usage, "--reps must be at least 1");
  Prepared p = prepare();
  rt::Runtime& runtime = rt::Runtime::get();
  text::ProgramRunner runner(p.compiled, p.lowered, p.n);
  print_backend(p.compiled, runner);
  runner.upload(p.inputs);

  auto median_ms = [&](auto&& body) {
    for (int k = 0; k < 3; ++k) // warm-up
      body();
    runtime.synchronize();
    std::vector<double> times;
    for (unsigned k = 0; k < Repetitions; ++k) {
      Clock::time_point t0 = Clock::now();
      body();
      runtime.synchronize();
      times.push_back(ms_since(t0));
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };

  double kernel_ms = median_ms([&] { runner.launch(); });
  size_t bytes = runner.bytes_per_launch();
  // The reference: a device-to-device copy moving as many bytes (read + write).
  size_t copy_bytes = std::max<size_t>(bytes / 2, 1);
  rt::Allocation src = runtime.allocator().allocate(copy_bytes);
  rt::Allocation dst = runtime.allocator().allocate(copy_bytes);
  double copy_ms = median_ms([&] { runtime.copy_device_to_device(dst, src, copy_bytes); });
  runtime.allocator().deallocate(src);
  runtime.allocator().deallocate(dst);

  double gbs = bytes / (kernel_ms * 1e6);
  double copy_gbs = 2.0 * copy_bytes / (copy_ms * 1e6);
  if (p.compiled.reductions.empty())
    llvm::outs() << fmt::format("{}  n = {}  on {}\n", p.compiled.cuda.name, p.n, backend_description());
  else
    llvm::outs() << fmt::format("{}  ({} statement{} with reductions)  on {}\n", kernel_names(p.compiled),
                                p.compiled.reductions.size(), p.compiled.reductions.size() == 1 ? "" : "s",
                                backend_description());
  llvm::outs() << fmt::format("median {:.4f} ms over {} runs  {:.1f} GB/s  {:.0f}% of copy bandwidth "
                              "({:.1f} GB/s measured now)\n",
                              kernel_ms, Repetitions.getValue(), gbs, 100.0 * gbs / copy_gbs, copy_gbs);
  return 0;
}

} // namespace gpukit::cli
