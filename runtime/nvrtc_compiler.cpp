#include "runtime/nvrtc_compiler.hpp"

#include "runtime/nvrtc_api.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <utility>

namespace gpukit::rt {

namespace {

/// Owns an nvrtcProgram for the duration of one compilation.
class Program {
public:
  Program(const NvrtcApi& api, const std::string& source, const std::string& name) : Api(api) {
    nvrtcResult result =
        Api.nvrtcCreateProgram(&Handle, source.c_str(), name.c_str(), 0, nullptr, nullptr);
    if (result != NVRTC_SUCCESS)
      throw Error(ErrorKind::Compile, fmt::format("nvrtcCreateProgram({}) failed: {}", name,
                                                  Api.nvrtcGetErrorString(result)));
  }
  ~Program() {
    if (Handle)
      Api.nvrtcDestroyProgram(&Handle);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  nvrtcProgram get() const { return Handle; }

  std::string log() const {
    size_t size = 0;
    if (Api.nvrtcGetProgramLogSize(Handle, &size) != NVRTC_SUCCESS || size <= 1)
      return {};
    std::string text(size, '\0');
    if (Api.nvrtcGetProgramLog(Handle, text.data()) != NVRTC_SUCCESS)
      return {};
    text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    return text;
  }

private:
  const NvrtcApi& Api;
  nvrtcProgram Handle = nullptr;
};

/// The digits of "sm_90" / "sm_90a" ("90" / "90a"); throws for anything else.
std::string arch_number(std::string_view arch) {
  bool valid = arch.size() >= 5 && arch.substr(0, 3) == "sm_" && std::isdigit(arch[3]) &&
               std::isdigit(arch[4]);
  for (size_t i = 5; valid && i < arch.size(); ++i)
    valid = std::isalnum(static_cast<unsigned char>(arch[i])) != 0;
  if (!valid)
    throw Error(ErrorKind::Usage,
                fmt::format("'{}' is not a GPU architecture; expected the form sm_90 (SM 9.0)", arch));
  return std::string(arch.substr(3));
}

std::vector<std::string> options_for(std::string gpu_architecture,
                                     const std::vector<std::string>& extra_options) {
  std::vector<std::string> options = {"--gpu-architecture=" + gpu_architecture, "-std=c++17",
                                      "-default-device"};
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  // GPUKIT_NVRTC_OPTIONS: space-separated options added to every compile
  // (e.g. "--Ofast-compile=max" to trade kernel speed for compile time);
  // part of the cache key like every option.
  if (const char* user = std::getenv("GPUKIT_NVRTC_OPTIONS")) {
    std::string_view rest(user);
    while (!rest.empty()) {
      size_t space = rest.find(' ');
      std::string_view word = rest.substr(0, space);
      if (!word.empty())
        options.emplace_back(word);
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
  }
  return options;
}

/// The source lines NVRTC's log blames: "<program>(12): error: ...".
std::vector<int> blamed_lines(std::string_view log, std::string_view program) {
  std::vector<int> lines;
  std::string prefix = fmt::format("{}(", program);
  for (size_t at = log.find(prefix); at != std::string_view::npos; at = log.find(prefix, at + 1)) {
    size_t digits = at + prefix.size();
    int line = 0;
    size_t end = digits;
    while (end < log.size() && std::isdigit(static_cast<unsigned char>(log[end])))
      line = line * 10 + (log[end++] - '0');
    if (end > digits && log.substr(end, 3) == "): ")
      lines.push_back(line);
  }
  return lines;
}

/// Runs NVRTC; on failure throws Error{Compile} with the log and the source.
struct Compiled {
  std::string Log;
  double Milliseconds = 0;
};

Compiled run_nvrtc(const NvrtcApi& api, const Program& program, std::string_view name,
                   std::string_view source, std::string_view arch, const std::string& program_name,
                   const std::vector<std::string>& options) {
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const std::string& option : options)
    argv.push_back(option.c_str());

  auto start = std::chrono::steady_clock::now();
  nvrtcResult result =
      api.nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  auto stop = std::chrono::steady_clock::now();
  Compiled compiled;
  compiled.Log = program.log();
  compiled.Milliseconds = std::chrono::duration<double, std::milli>(stop - start).count();
  if (result == NVRTC_SUCCESS)
    return compiled;

  throw Error(ErrorKind::Compile,
              fmt::format("NVRTC {}.{} could not compile kernel '{}' for {} ({}).\n"
                          "Options: {}\n{}\nSource of '{}':\n{}",
                          api.major, api.minor, name, arch, api.nvrtcGetErrorString(result),
                          fmt::join(options, " "),
                          compiled.Log.empty() ? std::string("(NVRTC gave no log)") : compiled.Log,
                          name, number_source_lines(source, blamed_lines(compiled.Log, program_name))));
}

} // namespace

std::vector<std::string> NvrtcCompiler::cubin_options(std::string_view arch,
                                                      const std::vector<std::string>& extra_options) {
  // NVRTC emits a CUBIN (SASS for exactly this GPU) for a real sm_XY arch,
  // and only PTX for compute_XY.
  return options_for("sm_" + arch_number(arch), extra_options);
}

std::vector<std::string> NvrtcCompiler::ptx_options(std::string_view arch,
                                                    const std::vector<std::string>& extra_options) {
  return options_for("compute_" + arch_number(arch), extra_options);
}

CompileResult NvrtcCompiler::compile(std::string_view name, std::string_view source,
                                     std::string_view arch,
                                     const std::vector<std::string>& extra_options) const {
  std::vector<std::string> options = cubin_options(arch, extra_options);
  std::string program_name = fmt::format("{}.cu", name);
  Program program(Api, std::string(source), program_name);
  Compiled compiled = run_nvrtc(Api, program, name, source, arch, program_name, options);

  CompileResult result;
  result.log = std::move(compiled.Log);
  result.milliseconds = compiled.Milliseconds;
  size_t size = 0;
  nvrtcResult status = Api.nvrtcGetCUBINSize(program.get(), &size);
  if (status != NVRTC_SUCCESS || size == 0)
    throw Error(ErrorKind::Compile,
                fmt::format("NVRTC compiled kernel '{}' but produced no CUBIN for {} ({}); is {} a "
                            "real GPU architecture?",
                            name, arch, Api.nvrtcGetErrorString(status), arch));
  result.cubin.resize(size);
  status = Api.nvrtcGetCUBIN(program.get(), result.cubin.data());
  if (status != NVRTC_SUCCESS)
    throw Error(ErrorKind::Compile, fmt::format("nvrtcGetCUBIN({}) failed: {}", name,
                                                Api.nvrtcGetErrorString(status)));
  return result;
}

std::string NvrtcCompiler::ptx(std::string_view name, std::string_view source, std::string_view arch,
                               const std::vector<std::string>& extra_options) const {
  std::vector<std::string> options = ptx_options(arch, extra_options);
  std::string program_name = fmt::format("{}.cu", name);
  Program program(Api, std::string(source), program_name);
  run_nvrtc(Api, program, name, source, arch, program_name, options);

  size_t size = 0;
  nvrtcResult status = Api.nvrtcGetPTXSize(program.get(), &size);
  if (status != NVRTC_SUCCESS)
    throw Error(ErrorKind::Compile, fmt::format("nvrtcGetPTXSize({}) failed: {}", name,
                                                Api.nvrtcGetErrorString(status)));
  std::string text(size, '\0');
  status = Api.nvrtcGetPTX(program.get(), text.data());
  if (status != NVRTC_SUCCESS)
    throw Error(ErrorKind::Compile, fmt::format("nvrtcGetPTX({}) failed: {}", name,
                                                Api.nvrtcGetErrorString(status)));
  while (!text.empty() && text.back() == '\0') // the size counts the terminator
    text.pop_back();
  return text;
}

std::vector<std::string> NvrtcCompiler::supported_archs() const {
  int count = 0;
  if (Api.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0)
    return {};
  std::vector<int> numbers(static_cast<size_t>(count));
  if (Api.nvrtcGetSupportedArchs(numbers.data()) != NVRTC_SUCCESS)
    return {};
  std::sort(numbers.begin(), numbers.end());
  std::vector<std::string> archs;
  for (int number : numbers)
    archs.push_back(fmt::format("sm_{}", number));
  return archs;
}

std::string number_source_lines(std::string_view source, const std::vector<int>& marked) {
  std::string out;
  int line = 1;
  size_t begin = 0;
  while (begin < source.size()) {
    size_t end = source.find('\n', begin);
    if (end == std::string_view::npos)
      end = source.size();
    std::string numbered = fmt::format("{:>4} | {}\n", line, source.substr(begin, end - begin));
    if (numbered[0] == ' ' && std::find(marked.begin(), marked.end(), line) != marked.end())
      numbered[0] = '>';
    out += numbered;
    begin = end + 1;
    ++line;
  }
  if (!out.empty())
    out.pop_back(); // no trailing newline: callers place the text
  return out;
}

} // namespace gpukit::rt
