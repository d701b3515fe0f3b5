// The part of CUDA code generation every kernel family shares: C++ type
// names, parameter names, literals, the small helper functions a kernel may
// need, and the statements that compute a program's outputs for one element.
// codegen/cuda_emitter.cpp wraps them in the elementwise loops; a reduction
// family would wrap the same element code in its own loops.
//
//   CudaHelpers helpers;
//   CudaNames names(program);
//   ElementCodegen element(program, names, helpers);
//   element.emit(w, [&](size_t in) { return names.input(in) + "[i]"; },
//                   [&](size_t out) { return names.output(out) + "[i]"; });
//
// Internal to codegen/: the interface is emit_cuda().
#pragma once

#include "codegen/cuda_helpers.hpp"
#include "codegen/ir.hpp"
#include "codegen/source_writer.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gpukit::codegen {

/// The C++ type a value of `t` computes in inside a kernel: bool,
/// unsigned char, int, long long, float (f16, bf16 and f32) or double.
std::string_view cuda_compute_type(DType t);
/// The C++ type an element of `t` is stored as in memory: half precision as
/// unsigned short (its bits), bool as unsigned char (0 or 1).
std::string_view cuda_storage_type(DType t);

/// Kernel parameter names: the program's own names where they are usable C++
/// identifiers that cannot collide with the kernel's locals, the math
/// functions it calls or each other; otherwise gk_in<k>, gk_out<k>, gk_s<k>.
class CudaNames {
public:
  explicit CudaNames(const ir::Program& program);
  const std::string& input(size_t k) const { return Inputs[k]; }
  const std::string& output(size_t k) const { return Outputs[k]; }
  const std::string& scalar(size_t k) const { return Scalars[k]; }

private:
  std::vector<std::string> Inputs, Outputs, Scalars;
};

/// Whether `name` is a C++ identifier.
bool is_identifier(std::string_view name);

/// Emits the statements that compute every output of a typed program for one
/// element: loads are inlined where used, values used more than once and
/// function calls get temporaries t0, t1, ..., one statement per line.
class ElementCodegen {
public:
  /// The storage expression of input `k`'s element (e.g. "x[i]", "x_p.v[k]").
  using Load = std::function<std::string(size_t k)>;
  /// The lvalue output `k`'s element is stored to (e.g. "out[i]").
  using Store = std::function<std::string(size_t k)>;

  ElementCodegen(const ir::Program& program, const CudaNames& names, CudaHelpers& helpers);

  void emit(SourceWriter& w, const Load& load, const Store& store);

  /// Whether input `k` is read by a node that reaches an output.
  bool input_used(size_t k) const { return InputUsed[k]; }

private:
  const ir::Program& P;
  const CudaNames& Names;
  CudaHelpers& Helpers;
  std::vector<bool> Live;
  std::vector<unsigned> Uses;       ///< by live nodes and outputs
  std::vector<unsigned> OutputUses; ///< by outputs alone
  std::vector<bool> InputUsed;
};

} // namespace gpukit::codegen
