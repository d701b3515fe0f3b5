#include "codegen/passes/pipeline.hpp"

#include "codegen/passes/constant_fold.hpp"
#include "codegen/passes/cse.hpp"
#include "codegen/passes/dead_code.hpp"
#include "codegen/passes/type_infer.hpp"

namespace gpukit::ir {

Program optimize(const Program& program) {
  Program typed = infer_types(program);
  Program folded = fold_constants(typed);
  Program merged = eliminate_common_subexpressions(folded);
  return remove_dead_nodes(merged);
}

} // namespace gpukit::ir
