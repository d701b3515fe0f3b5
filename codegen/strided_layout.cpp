#include "codegen/strided_layout.hpp"

#include <llvm/Support/ErrorHandling.h>

#include <cstdlib>

namespace gpukit::codegen {

static char access_letter(AxisAccess a) {
  switch (a) {
  case AxisAccess::Broadcast: return 'B';
  case AxisAccess::Unit: return 'U';
  case AxisAccess::Strided: return 'S';
  }
  llvm_unreachable("unknown AxisAccess");
}

std::string StridedLayout::key() const {
  if (flat())
    return "flat";
  auto list = [&](llvm::ArrayRef<AxisAccesses> operands) {
    std::string s;
    for (size_t k = 0; k < operands.size(); ++k) {
      if (k)
        s += ',';
      for (unsigned a = 0; a < rank; ++a)
        s += access_letter(operands[k][a]);
    }
    return s;
  };
  return "r" + std::to_string(rank) + " in:" + list(inputs) + " out:" + list(outputs);
}

StridedLayout classify(const StridedArgs& args) {
  StridedLayout layout;
  layout.rank = args.rank;
  auto accesses = [&](const AxisStrides& strides) {
    AxisAccesses a{};
    for (unsigned k = 0; k < args.rank; ++k)
      a[k] = access_of(strides[k]);
    return a;
  };
  for (const AxisStrides& s : args.inputs)
    layout.inputs.push_back(accesses(s));
  for (const AxisStrides& s : args.outputs)
    layout.outputs.push_back(accesses(s));
  return layout;
}

bool strided_needs_index64(const StridedArgs& args) {
  constexpr uint64_t limit = uint64_t(1) << 31;
  uint64_t n = 1;
  for (unsigned k = 0; k < args.rank; ++k)
    n *= static_cast<uint64_t>(args.extents[k]);
  if (n >= limit)
    return true;
  auto reach = [&](const AxisStrides& strides) {
    uint64_t r = 0;
    for (unsigned k = 0; k < args.rank; ++k)
      r += static_cast<uint64_t>(std::llabs(strides[k])) * static_cast<uint64_t>(args.extents[k]);
    return r;
  };
  for (const AxisStrides& s : args.inputs)
    if (reach(s) >= limit)
      return true;
  for (const AxisStrides& s : args.outputs)
    if (reach(s) >= limit)
      return true;
  return false;
}

} // namespace gpukit::codegen
