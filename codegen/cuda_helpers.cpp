#include "codegen/cuda_helpers.hpp"

#include "codegen/cuda_expression.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <algorithm>
#include <string_view>

namespace gpukit::codegen {

void CudaHelpers::use_function(uint32_t index) {
  if (Functions.size() <= index)
    Functions.resize(index + 1, false);
  Functions[index] = true;
}

namespace {

std::string_view helper_definition(Helper h) {
  switch (h) {
  case Helper::Pack:
    return "// N consecutive elements, loaded and stored as one aligned vector access.\n"
           "template <typename T, int N> struct __align__(sizeof(T) * N) gk_pack { T v[N]; };\n";
  case Helper::F16ToF32:
    return "__device__ __forceinline__ float gk_f16_to_f32(unsigned short h) {\n"
           "  float f;\n"
           "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
           "  return f;\n"
           "}\n";
  case Helper::F32ToF16:
    return "// Rounds to nearest even; overflows to infinity.\n"
           "__device__ __forceinline__ unsigned short gk_f32_to_f16(float f) {\n"
           "  unsigned short h;\n"
           "  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
           "  return h;\n"
           "}\n";
  case Helper::BF16ToF32:
    return "__device__ __forceinline__ float gk_bf16_to_f32(unsigned short b) {\n"
           "  return __uint_as_float((unsigned)b << 16);\n"
           "}\n";
  case Helper::F32ToBF16:
    return "// Rounds to nearest even (cvt.rn.bf16.f32 needs sm_80).\n"
           "__device__ __forceinline__ unsigned short gk_f32_to_bf16(float f) {\n"
           "  unsigned short b;\n"
           "  asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(b) : \"f\"(f));\n"
           "  return b;\n"
           "}\n";
  // Float to integer: truncate toward zero and saturate, as the hardware
  // conversions do; NaN gives 0 (the hardware gives 0, INT_MAX or INT64_MIN
  // depending on the types).
  case Helper::F32ToU8:
    return "// Truncates toward zero and saturates; NaN -> 0.\n"
           "__device__ __forceinline__ unsigned char gk_f32_to_u8(float x) {\n"
           "  return x != x ? 0 : (unsigned char)min(__float2uint_rz(x), 255u);\n"
           "}\n";
  case Helper::F32ToI32:
    return "// Truncates toward zero and saturates; NaN -> 0.\n"
           "__device__ __forceinline__ int gk_f32_to_i32(float x) {\n"
           "  return x != x ? 0 : __float2int_rz(x);\n"
           "}\n";
  case Helper::F32ToI64:
    return "// Truncates toward zero and saturates; NaN -> 0.\n"
           "__device__ __forceinline__ long long gk_f32_to_i64(float x) {\n"
           "  return x != x ? 0 : __float2ll_rz(x);\n"
           "}\n";
  case Helper::F64ToU8:
    return "// Truncates toward zero and saturates; NaN -> 0.\n"
           "__device__ __forceinline__ unsigned char gk_f64_to_u8(double x) {\n"
           "  return x != x ? 0 : (unsigned char)min(__double2uint_rz(x), 255u);\n"
           "}\n";
  case Helper::F64ToI32:
    return "// Truncates toward zero and saturates; NaN -> 0.\n"
           "__device__ __forceinline__ int gk_f64_to_i32(double x) {\n"
           "  return x != x ? 0 : __double2int_rz(x);\n"
           "}\n";
  case Helper::F64ToI64:
    return "// Truncates toward zero and saturates; NaN -> 0.\n"
           "__device__ __forceinline__ long long gk_f64_to_i64(double x) {\n"
           "  return x != x ? 0 : __double2ll_rz(x);\n"
           "}\n";
  case Helper::DivU8:
    return "// x / 0 == 0.\n"
           "__device__ __forceinline__ unsigned char gk_div_u8(unsigned char a, unsigned char b) {\n"
           "  return b == 0 ? 0 : a / b;\n"
           "}\n";
  case Helper::DivI32:
    return "// x / 0 == 0 and INT_MIN / -1 == INT_MIN (wraps); a plain `/` is undefined for both.\n"
           "__device__ __forceinline__ int gk_div_i32(int a, int b) {\n"
           "  return b == 0 ? 0 : b == -1 ? (int)(0u - (unsigned)a) : a / b;\n"
           "}\n";
  case Helper::DivI64:
    return "// x / 0 == 0 and INT64_MIN / -1 == INT64_MIN (wraps); a plain `/` is undefined for both.\n"
           "__device__ __forceinline__ long long gk_div_i64(long long a, long long b) {\n"
           "  return b == 0 ? 0 : b == -1 ? (long long)(0ull - (unsigned long long)a) : a / b;\n"
           "}\n";
  case Helper::ModU8:
    return "// x % 0 == 0.\n"
           "__device__ __forceinline__ unsigned char gk_mod_u8(unsigned char a, unsigned char b) {\n"
           "  return b == 0 ? 0 : a % b;\n"
           "}\n";
  case Helper::ModI32:
    return "// x % 0 == 0 and x % -1 == 0 (INT_MIN % -1 is undefined in C++).\n"
           "__device__ __forceinline__ int gk_mod_i32(int a, int b) {\n"
           "  return b == 0 || b == -1 ? 0 : a % b;\n"
           "}\n";
  case Helper::ModI64:
    return "// x % 0 == 0 and x % -1 == 0 (INT64_MIN % -1 is undefined in C++).\n"
           "__device__ __forceinline__ long long gk_mod_i64(long long a, long long b) {\n"
           "  return b == 0 || b == -1 ? 0 : a % b;\n"
           "}\n";
  }
  llvm_unreachable("unknown Helper");
}

/// A user function body re-indented by two spaces (common indentation removed).
std::string indent_body(std::string_view body) {
  std::vector<std::string_view> lines;
  while (true) {
    size_t end = body.find('\n');
    lines.push_back(body.substr(0, end));
    if (end == std::string_view::npos)
      break;
    body.remove_prefix(end + 1);
  }
  auto blank = [](std::string_view l) { return l.find_first_not_of(" \t\r") == std::string_view::npos; };
  while (!lines.empty() && blank(lines.front()))
    lines.erase(lines.begin());
  while (!lines.empty() && blank(lines.back()))
    lines.pop_back();
  size_t common = std::string_view::npos;
  for (std::string_view l : lines)
    if (!blank(l))
      common = std::min(common, l.find_first_not_of(" \t"));
  std::string out;
  for (std::string_view l : lines) {
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t'))
      l.remove_suffix(1);
    out += blank(l) ? "\n" : fmt::format("  {}\n", l.substr(common));
  }
  return out;
}

std::string function_definition(const ir::UserFunction& fn) {
  if (!is_identifier(fn.name))
    throw Error(ErrorKind::Usage,
                fmt::format("device function name '{}' is not a C++ identifier; use letters, digits "
                            "and '_'", fn.name));
  std::string params;
  for (size_t k = 0; k < fn.params.size(); ++k) {
    const ir::Operand& param = fn.params[k];
    if (!is_identifier(param.name))
      throw Error(ErrorKind::Usage,
                  fmt::format("parameter {} of device function '{}' is named '{}', which is not a "
                              "C++ identifier", k, fn.name, param.name));
    params += fmt::format("{}{} {}", k ? ", " : "", cuda_compute_type(param.type), param.name);
  }
  std::string head = fmt::format("__device__ __forceinline__ {} gk_fn_{}({})",
                                 cuda_compute_type(fn.result), fn.name, params);
  std::string body = indent_body(fn.body);
  bool one_line = body.find('\n') == body.size() - 1 && head.size() + body.size() < 100;
  if (body.empty())
    return head + " {}\n";
  if (one_line)
    return fmt::format("{} {{ {} }}\n", head, std::string_view(body).substr(2, body.size() - 3));
  return fmt::format("{} {{\n{}}}\n", head, body);
}

} // namespace

std::string CudaHelpers::definitions(const ir::Program& p) const {
  std::string out;
  for (size_t h = 0; h < HelperCount; ++h)
    if (Used[h])
      out += fmt::format("{}\n", helper_definition(static_cast<Helper>(h)));
  bool any_function = false;
  for (bool used : Functions)
    any_function |= used;
  // User bodies are C++ written for <cstdint>, which NVRTC does not provide.
  if (any_function)
    out += "// Fixed-width integer names for the device functions below (NVRTC has no <cstdint>).\n"
           "typedef unsigned char uint8_t;\n"
           "typedef int int32_t;\n"
           "typedef long long int64_t;\n\n";
  for (size_t k = 0; k < Functions.size(); ++k)
    if (Functions[k])
      out += fmt::format("{}\n", function_definition(p.functions()[k]));
  return out;
}

} // namespace gpukit::codegen
