// NvrtcCompiler: CUDA C++ source to a CUBIN (or PTX) for one exact GPU
// architecture, through NVRTC loaded at run time.
//
//   NvrtcCompiler compiler(*NvrtcApi::load());
//   CompileResult r = compiler.compile("ew_7c1f09a2", source, "sm_90");
//   // r.cubin is an ELF image for cuModuleLoadData
//
// Options are always --gpu-architecture=<arch>, -std=c++17 and
// -default-device, then the caller's; math is IEEE-accurate (no
// --use_fast_math) unless the caller asks. It caches nothing: KernelCache does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpukit::rt {

struct NvrtcApi;

struct CompileResult {
  std::vector<char> cubin;
  /// NVRTC's log (warnings), often empty.
  std::string log;
  /// Wall time of nvrtcCompileProgram.
  double milliseconds = 0;
};

class NvrtcCompiler {
public:
  explicit NvrtcCompiler(const NvrtcApi& api) : Api(api) {}

  /// Compiles `source` to a CUBIN for `arch` ("sm_90"). `name` names the
  /// program in NVRTC's messages. Throws Error{Compile} with NVRTC's log and
  /// the numbered source, or Error{Usage} for a malformed arch.
  CompileResult compile(std::string_view name, std::string_view source, std::string_view arch,
                        const std::vector<std::string>& extra_options = {}) const;

  /// The PTX of `source` for the virtual architecture of `arch`
  /// ("sm_90" -> compute_90), for --ptx dumps. Throws like compile().
  std::string ptx(std::string_view name, std::string_view source, std::string_view arch,
                  const std::vector<std::string>& extra_options = {}) const;

  /// The complete option list compile() passes for `arch` and `extra_options`
  /// (KernelCache hashes it into its keys).
  static std::vector<std::string> cubin_options(std::string_view arch,
                                                const std::vector<std::string>& extra_options = {});
  /// The option list ptx() passes.
  static std::vector<std::string> ptx_options(std::string_view arch,
                                              const std::vector<std::string>& extra_options = {});

  /// The CUBIN architectures this NVRTC can target ("sm_75", ...), ascending.
  std::vector<std::string> supported_archs() const;

private:
  const NvrtcApi& Api;
};

/// `source` with right-aligned line numbers ("  12 | code"); lines in
/// `marked` get a '>' in the first column.
std::string number_source_lines(std::string_view source, const std::vector<int>& marked = {});

} // namespace gpukit::rt
