// The small device functions a generated kernel may need (f16 conversions,
// guarded integer division, ...) and the user's device functions: a kernel
// records which it uses while its body is generated, and only those are
// defined in its source.
//
//   CudaHelpers helpers;
//   helpers.use(Helper::F32ToF16);
//   std::string defs = helpers.definitions(program);   // goes before the kernel
//
// Internal to codegen/.
#pragma once

#include "codegen/ir.hpp"

#include <array>
#include <string>
#include <vector>

namespace gpukit::codegen {

/// Small device functions a kernel defines only when it uses them, in this
/// order in the source.
enum class Helper {
  Pack,      ///< gk_pack<T, N>: N elements as one aligned vector access
  F16ToF32,  ///< gk_f16_to_f32
  F32ToF16,  ///< gk_f32_to_f16 (round to nearest even)
  BF16ToF32, ///< gk_bf16_to_f32
  F32ToBF16, ///< gk_f32_to_bf16 (round to nearest even, sm_80+)
  F32ToU8,   ///< gk_f32_to_u8 and the like: truncate, saturate, NaN -> 0
  F32ToI32,
  F32ToI64,
  F64ToU8,
  F64ToI32,
  F64ToI64,
  DivU8,     ///< gk_div_u8: x / 0 == 0
  DivI32,    ///< gk_div_i32: x / 0 == 0, INT_MIN / -1 == INT_MIN
  DivI64,
  ModU8,     ///< gk_mod_u8: x % 0 == 0
  ModI32,    ///< gk_mod_i32: x % 0 == 0, x % -1 == 0
  ModI64,
};
inline constexpr size_t HelperCount = static_cast<size_t>(Helper::ModI64) + 1;

class CudaHelpers {
public:
  void use(Helper h) { Used[static_cast<size_t>(h)] = true; }
  bool used(Helper h) const { return Used[static_cast<size_t>(h)]; }
  /// Marks user function `index` (Program::functions()) as called.
  void use_function(uint32_t index);
  /// The definitions of the helpers and user functions used, in a fixed order.
  std::string definitions(const ir::Program& program) const;

private:
  std::array<bool, HelperCount> Used{};
  std::vector<bool> Functions;
};

} // namespace gpukit::codegen
