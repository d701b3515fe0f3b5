#include "dsl/text/names.hpp"

#include "codegen/kernel_names.hpp"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <array>

namespace gpukit::text {

namespace {

struct DTypeSpelling {
  std::string_view name;
  DType type;
};

constexpr DTypeSpelling kDTypeSpellings[] = {
    {"bool", DType::Bool},         {"u8", DType::UInt8},      {"i32", DType::Int32},
    {"i64", DType::Int64},         {"f16", DType::Float16},   {"bf16", DType::BFloat16},
    {"f32", DType::Float32},       {"f64", DType::Float64},   {"uint8", DType::UInt8},
    {"int32", DType::Int32},       {"int64", DType::Int64},   {"float16", DType::Float16},
    {"bfloat16", DType::BFloat16}, {"float32", DType::Float32}, {"float64", DType::Float64},
};

using ir::Op;
constexpr FunctionKind E = FunctionKind::Elementwise;
constexpr FunctionKind R = FunctionKind::Reduction;

// Sorted by name (find_function bisects). Reductions name their operation
// Op::Input as a placeholder: they are no IR node but a ReductionPlan stage
// (dsl/text/lower_reduction.cpp).
constexpr FunctionInfo kFunctions[] = {
    {"abs", E, Op::Abs, 1, 1},        {"all", R, Op::Input, 1, 1},
    {"amax", R, Op::Input, 1, 1},     {"amin", R, Op::Input, 1, 1},
    {"any", R, Op::Input, 1, 1},      {"argmax", R, Op::Input, 1, 1},
    {"argmin", R, Op::Input, 1, 1},   {"ceil", E, Op::Ceil, 1, 1},
    {"clamp", E, Op::Clamp, 3, 3},    {"cos", E, Op::Cos, 1, 1},
    {"erf", E, Op::Erf, 1, 1},        {"exp", E, Op::Exp, 1, 1},
    {"exp2", E, Op::Exp2, 1, 1},      {"floor", E, Op::Floor, 1, 1},
    {"fma", E, Op::Fma, 3, 3},        {"log", E, Op::Log, 1, 1},
    {"log10", E, Op::Log10, 1, 1},    {"log2", E, Op::Log2, 1, 1},
    {"logsumexp", R, Op::Input, 1, 1}, {"max", E, Op::Max, 2, 2},
    {"mean", R, Op::Input, 1, 1},     {"min", E, Op::Min, 2, 2},
    {"pow", E, Op::Pow, 2, 2},        {"prod", R, Op::Input, 1, 1},
    {"round", E, Op::Round, 1, 1},    {"rsqrt", E, Op::Rsqrt, 1, 1},
    {"sigmoid", E, Op::Sigmoid, 1, 1}, {"sin", E, Op::Sin, 1, 1},
    {"softmax", R, Op::Input, 1, 1},  {"sqrt", E, Op::Sqrt, 1, 1},
    {"std", R, Op::Input, 1, 1},      {"sum", R, Op::Input, 1, 1},
    {"tan", E, Op::Tan, 1, 1},        {"tanh", E, Op::Tanh, 1, 1},
    {"var", R, Op::Input, 1, 1},      {"where", E, Op::Select, 3, 3},
};

constexpr std::string_view kReservedWords[] = {"true", "false", "inf", "nan", "let"};

} // namespace

std::optional<DType> find_dtype(std::string_view name) {
  for (const DTypeSpelling& s : kDTypeSpellings)
    if (s.name == name)
      return s.type;
  return std::nullopt;
}

std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> names;
  for (DType t : AllDTypes)
    names.push_back(short_name(t));
  return names;
}

const FunctionInfo* find_function(std::string_view name) {
  auto it = std::lower_bound(std::begin(kFunctions), std::end(kFunctions), name,
                             [](const FunctionInfo& f, std::string_view n) { return f.name < n; });
  if (it == std::end(kFunctions) || it->name != name)
    return nullptr;
  return &*it;
}

std::vector<std::string_view> function_names() {
  std::vector<std::string_view> names;
  for (const FunctionInfo& f : kFunctions)
    names.push_back(f.name);
  return names;
}

bool is_reserved(std::string_view name) {
  if (find_dtype(name))
    return true;
  return std::find(std::begin(kReservedWords), std::end(kReservedWords), name) !=
         std::end(kReservedWords);
}

bool has_reserved_prefix(std::string_view name) { return codegen::has_reserved_prefix(name); }

bool is_reserved_kernel_name(std::string_view name) {
  return codegen::is_reserved_kernel_name(name);
}

std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates) {
  // A typo is a small fraction of the word: allow one edit per three
  // characters, at least one, so "x" does not suggest "y" but "sinn" finds "sin".
  unsigned limit = std::max<unsigned>(1, static_cast<unsigned>(name.size()) / 3);
  unsigned best = limit + 1;
  std::string_view best_name;
  for (std::string_view c : candidates) {
    if (c == name)
      continue;
    unsigned d = llvm::StringRef(name).edit_distance(c, true, best);
    if (d < best || (d == best && !best_name.empty() && c < best_name)) {
      best = d;
      best_name = c;
    }
  }
  if (best > limit || best_name.empty() || best >= name.size())
    return "";
  return fmt::format("; did you mean '{}'?", best_name);
}

} // namespace gpukit::text
