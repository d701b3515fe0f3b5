// Reductions of the Lowerer (dsl/text/lowerer.hpp): the calls, the rule that
// broadcasts a reduction's value, and the statements that contain them.
// Each statement builds its ir::ReductionPlan as dsl/reduction_kernel.cpp
// builds the C++ DSL's: a reduction's argument is a program of its own whose
// single output "v" is the argument (ir::add_stage), and the enclosing
// program reads its value as the scalar r<k>; literals (and the axis, after
// the argument's literals) take the slots s0, s1, ... in the order written.
#include "dsl/text/lowerer.hpp"

#include "codegen/kernel_names.hpp"

#include "codegen/passes/pipeline.hpp"
#include "dsl/text/literal.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

namespace gpukit::text::detail_lower {

namespace {

std::optional<ir::ReduceOp> reduce_op_of(std::string_view name) {
  using enum ir::ReduceOp;
  if (name == "sum") return Sum;
  if (name == "prod") return Prod;
  if (name == "mean") return Mean;
  if (name == "var") return Var;
  if (name == "min" || name == "amin") return Min;
  if (name == "max" || name == "amax") return Max;
  if (name == "argmin") return ArgMin;
  if (name == "argmax") return ArgMax;
  if (name == "any") return Any;
  if (name == "all") return All;
  return std::nullopt;
}

/// The arguments of a reduction call, checked.
struct ReductionArgs {
  const Expr* array = nullptr;
  const Expr* axis = nullptr; ///< an integer literal, or null: every element
  bool keepdims = false;
};

/// The key of stage k's value among a program's nodes (no name can be it).
std::string stage_key(unsigned k) { return fmt::format("#r{}", k); }

std::string shorten(std::string text) {
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

/// The nodes of `e`, counting no further than `limit`.
size_t expression_size(const Expr& e, size_t limit) {
  size_t n = 1;
  for (const Expr& a : e.args) {
    if (n >= limit)
      break;
    n += expression_size(a, limit - n);
  }
  return n;
}

std::string axis_words(const std::optional<int>& axis) {
  return axis ? fmt::format("axis {}", *axis) : std::string("every element");
}

} // namespace

bool Lowerer::is_reduction_call(const Expr& e) const {
  if (e.kind != ExprKind::Call || find_dtype(e.name))
    return false;
  const FunctionInfo* f = find_function(e.name);
  if (!f)
    return false;
  if (f->kind == FunctionKind::Reduction)
    return true;
  // min(x) and max(x, axis=1) reduce; min(x, y) is elementwise.
  if (f->op != ir::Op::Min && f->op != ir::Op::Max)
    return false;
  if (e.args.size() == 1)
    return true;
  for (const std::string& k : e.keywords)
    if (!k.empty())
      return true;
  return false;
}

bool Lowerer::contains_reduction(const Expr& e) const {
  if (is_reduction_call(e))
    return true;
  if (e.kind == ExprKind::Name) {
    auto it = Symbols.find(e.name);
    return it != Symbols.end() && it->second.reduces;
  }
  for (const Expr& a : e.args)
    if (contains_reduction(a))
      return true;
  return false;
}

/// Checks a reduction's arguments: an array, then an optional axis
/// (positional when `axis_positional`, else only as axis=), and keepdims.
static ReductionArgs reduction_args(const SourceFile& src, const Expr& e, std::string_view name,
                                    bool axis_positional, bool takes_keepdims) {
  ReductionArgs r;
  std::vector<const Expr*> positional;
  const Expr* keep = nullptr;
  for (size_t k = 0; k < e.args.size(); ++k) {
    const std::string& kw = k < e.keywords.size() ? e.keywords[k] : std::string();
    if (kw.empty()) {
      positional.push_back(&e.args[k]);
    } else if (kw == "axis") {
      r.axis = &e.args[k];
    } else if (kw == "keepdims" && takes_keepdims) {
      keep = &e.args[k];
    } else {
      // Point at the keyword, which the text holds just before its value.
      size_t at = src.text().rfind(kw, e.args[k].offset);
      std::vector<std::string_view> known{"axis"};
      if (takes_keepdims)
        known.push_back("keepdims");
      src.fail(ErrorKind::Usage, at == std::string::npos ? e.args[k].offset : static_cast<Offset>(at),
               fmt::format("{}() takes the keyword argument{} {}, not '{}'{}", name,
                           takes_keepdims ? "s" : "", takes_keepdims ? "'axis' and 'keepdims'" : "'axis'",
                           kw, did_you_mean(kw, known)));
    }
  }
  std::string usage = fmt::format("{0}() takes an array and an optional axis, as in {0}(x, axis=1)", name);
  if (positional.empty() || positional.size() > 2)
    src.fail(ErrorKind::Usage, e.offset, usage);
  r.array = positional[0];
  if (positional.size() == 2) {
    if (!axis_positional)
      src.fail(ErrorKind::Usage, positional[1]->offset,
               fmt::format("{0}() of one array reduces it; give its axis as axis=...: {0}(x, y) of two "
                           "is the elementwise {1}imum, which takes no keyword arguments",
                           name, name == "min" ? "min" : "max"));
    if (r.axis)
      src.fail(ErrorKind::Usage, positional[1]->offset,
               fmt::format("{}() is given two axes; a reduction reduces one axis or every element", name));
    r.axis = positional[1];
  }
  if (r.axis && (r.axis->kind != ExprKind::Number || r.axis->is_float))
    src.fail(ErrorKind::Type, r.axis->offset,
             fmt::format("the axis of {}() must be an integer literal, not '{}'", name, format_expr(*r.axis)));
  if (keep) {
    if (keep->kind != ExprKind::Bool)
      src.fail(ErrorKind::Type, keep->offset,
               fmt::format("keepdims of {}() is true or false, not '{}'", name, format_expr(*keep)));
    r.keepdims = keep->int_value != 0;
  }
  return r;
}

Value Lowerer::lower_reduction_call(const Expr& e, const FunctionInfo& f) {
  if (!Red)
    throw Error(ErrorKind::Internal,
                fmt::format("{}() reached the elementwise kernel; its statement was not seen to reduce", f.name));
  std::optional<ir::ReduceOp> op = reduce_op_of(f.name);
  if (!op)
    return lower_composite(e, f);
  bool minmax = f.kind == FunctionKind::Elementwise;
  ReductionArgs args = reduction_args(Src, e, f.name, /*axis_positional=*/!minmax, /*takes_keepdims=*/true);

  // The argument is a program of its own: the body of a stage.
  ir::Program body;
  ir::Program* outer = Prog;
  Prog = &body;
  Red->nodes.emplace_back();
  ++Red->depth;
  Value a = lower_expr(*args.array);
  --Red->depth;
  Red->nodes.pop_back();
  Prog = outer;

  if (a.shape < 0)
    Src.fail(ErrorKind::Usage, args.array->offset,
             fmt::format("{}() reduces an array, but {}", f.name, describe_operand(*args.array, a)));
  if (a.group)
    Src.fail(ErrorKind::Usage, args.array->offset,
             fmt::format("{}() of a reduced value: {}; a statement reduces its arrays once", f.name,
                         describe_operand(*args.array, a)),
             "reduce the array itself over more axes in one reduction (e.g. every element), or "
             "compute the reduction's value and reduce it in a program of its own");

  const ArrayInfo arr = Arrays[a.shape]; // a copy: add_shape below grows Arrays
  const int rank = static_cast<int>(arr.dims.size());
  std::optional<int> axis;
  if (args.axis) {
    int64_t v = args.axis->int_value;
    if (v < -rank || v >= rank)
      Src.fail(ErrorKind::Shape, args.axis->offset,
               fmt::format("axis {} is out of range: {}, which has {} dimension{} (axes {}..{})", v,
                           describe_operand(*args.array, a), rank, rank == 1 ? "" : "s", -rank, rank - 1));
    axis = static_cast<int>(v < 0 ? v + rank : v);
  }
  std::string text = shorten(format_expr(e));
  if (Red->main < 0) {
    Red->main = a.shape;
    Red->axis = axis;
    Red->first_text = text;
    // The result's shape: without the reduced axis, or with it as 1.
    ArrayInfo reduced = arr, kept = arr;
    reduced.name = kept.name = fmt::format("the result of {}", text);
    reduced.dims.clear();
    kept.dims.clear();
    for (int k = 0; k < rank; ++k) {
      if (!axis || *axis == k) {
        kept.dims.push_back(Dim{"", 1, e.offset});
        continue;
      }
      reduced.dims.push_back(arr.dims[k]);
      kept.dims.push_back(arr.dims[k]);
    }
    Red->reduced = add_shape(std::move(reduced));
    Red->reduced_keep = add_shape(std::move(kept));
  } else {
    if (!same_shape(Red->main, a.shape))
      Src.fail(ErrorKind::Shape, e.offset,
               fmt::format("every reduction of a statement reduces arrays of one shape: {}, but the "
                           "first, '{}', reduces {}",
                           describe_operand(*args.array, a), Red->first_text, Arrays[Red->main].describe()));
    if (axis != Red->axis)
      Src.fail(ErrorKind::Usage, args.axis ? args.axis->offset : e.offset,
               fmt::format("every reduction of a statement reduces the same axis: '{}' reduces {}, but "
                           "the first, '{}', reduces {}",
                           text, axis_words(axis), Red->first_text, axis_words(Red->axis)));
  }
  Red->keepdims |= args.keepdims;

  body.add_output("v", a.type.dtype, a.node);
  unsigned k = ir::add_stage(Red->plan, *op, body, a.type.dtype);
  // The axis's slot follows the argument's, as the DSL collects it.
  if (args.axis)
    ++Red->next_literal;

  Value v;
  DType result = Red->plan.stages[k].result;
  std::map<std::string, ir::NodeId>& nodes = Red->nodes.back();
  auto it = nodes.find(stage_key(k));
  if (it == nodes.end())
    it = nodes.emplace(stage_key(k), Prog->add_scalar(ir::stage_value_name(k), result, /*weak=*/false)).first;
  v.node = it->second;
  v.type = {result, false};
  v.shape = Red->reduced;
  v.group = true;
  return v;
}

Value Lowerer::lower_composite(const Expr& e, const FunctionInfo& f) {
  bool softmax = f.name == "softmax";
  ReductionArgs args = reduction_args(Src, e, f.name, /*axis_positional=*/true, /*takes_keepdims=*/!softmax);
  // Spelled out as the user would write them, at the call's place: the
  // kernels are those of the formula.
  Expr minus_one;
  if (softmax && !args.axis) {
    minus_one.kind = ExprKind::Number;
    minus_one.offset = e.offset;
    minus_one.int_value = -1;
    minus_one.float_value = -1;
    minus_one.spelling = "-1";
    args.axis = &minus_one;
  }
  auto call = [&](std::string name, std::vector<Expr> operands, bool reduce) {
    Expr c;
    c.kind = ExprKind::Call;
    c.offset = e.offset;
    c.name = std::move(name);
    c.args = std::move(operands);
    c.keywords.assign(c.args.size(), "");
    if (reduce && args.axis) {
      c.args.push_back(*args.axis);
      c.keywords.push_back("axis");
    }
    if (reduce && args.keepdims) {
      Expr keep;
      keep.kind = ExprKind::Bool;
      keep.offset = e.offset;
      keep.int_value = 1;
      c.args.push_back(keep);
      c.keywords.push_back("keepdims");
    }
    return c;
  };
  auto binary = [&](std::string op, Expr l, Expr r) {
    Expr b;
    b.kind = ExprKind::Binary;
    b.offset = e.offset;
    b.name = std::move(op);
    b.args.push_back(std::move(l));
    b.args.push_back(std::move(r));
    return b;
  };
  const Expr& x = *args.array;
  Expr formula;
  if (f.name == "std") {
    formula = call("sqrt", {call("var", {x}, true)}, false);
  } else if (f.name == "logsumexp") {
    Expr shifted = call("exp", {binary("-", x, call("max", {x}, true))}, false);
    formula = binary("+", call("max", {x}, true), call("log", {call("sum", {shifted}, true)}, false));
  } else if (softmax) {
    Expr shifted = call("exp", {binary("-", x, call("max", {x}, true))}, false);
    formula = binary("/", shifted, call("sum", {shifted}, true));
  } else {
    throw Error(ErrorKind::Internal, fmt::format("no reduction named {}()", f.name));
  }
  return lower_expr(formula);
}

std::optional<Value> Lowerer::combine_groups(llvm::ArrayRef<const Expr*> exprs, llvm::ArrayRef<Value> args,
                                             Offset at, std::string_view what) {
  size_t group = args.size();
  for (size_t k = 0; k < args.size() && group == args.size(); ++k)
    if (args[k].group)
      group = k;
  if (group == args.size())
    return std::nullopt;
  // Another operand is a scalar, a value per group too, an array of the
  // result's shape (read once per group), or of the reduced array's shape
  // (the value is broadcast back over each row).
  bool element = false;
  for (size_t k = 0; k < args.size(); ++k) {
    const Value& a = args[k];
    if (a.group || a.shape < 0)
      continue;
    if (same_shape(a.shape, Red->reduced) || same_shape(a.shape, Red->reduced_keep))
      continue;
    std::optional<int> b = broadcast_shapes(Red->main, a.shape);
    if (b && same_shape(*b, Red->main)) {
      element = true;
      continue;
    }
    Src.fail(ErrorKind::Shape, at,
             fmt::format("shapes do not broadcast in {}: {}, but {}", what,
                         describe_operand(*exprs[group], args[group]), describe_operand(*exprs[k], a)),
             fmt::format("a reduction's value combines with arrays of the reduced shape, {} (it is "
                         "broadcast back over each row), or of the result's shape, {}",
                         Arrays[Red->main].describe(), Arrays[Red->reduced].shape_string()));
  }
  Value v;
  if (!element) {
    v.shape = Red->reduced;
    v.group = true;
    return v;
  }
  const int rank = static_cast<int>(Arrays[Red->main].dims.size());
  bool last_axis = Red->axis && *Red->axis == rank - 1;
  // Inside a reduction's argument every kind reads the values of earlier
  // stages per group (var does); the statement's own value can be per
  // element only over whole rows, which the row kernel keeps on chip.
  if (Red->depth == 0 && !last_axis && !Red->checking_let)
    Src.fail(ErrorKind::Usage, at,
             fmt::format("'{}' is broadcast back over {} here, which needs a reduction of the last "
                         "axis, but it reduces {}",
                         shorten(format_expr(*exprs[group])), Arrays[Red->main].describe(),
                         axis_words(Red->axis)),
             fmt::format("reduce axis={} (each row is kept on chip), or give the statement one value "
                         "per group",
                         rank - 1));
  v.shape = Red->main;
  return v;
}

std::string Lowerer::reduction_kernel_name(const std::string& name, bool scalar) {
  if (auto it = Red->kernel_name_of.find(name); it != Red->kernel_name_of.end())
    return it->second;
  // As the elementwise kernel names them (codegen::free_kernel_name), which
  // keeps them clear of the stage values (r<digit>...) and of the reduction
  // kernels' own identifiers (gk_...).
  std::string kernel = codegen::free_kernel_name(name, scalar ? "arg_" : "in_", scalar ? "_arg" : "_in",
                                                 [&](const std::string& c) { return Red->kernel_names.count(c) > 0; });
  Red->kernel_names.insert(kernel);
  Red->kernel_name_of.emplace(name, kernel);
  return kernel;
}

Value Lowerer::reduction_literal(const Expr& e) {
  // Every literal its own slot, as the DSL's reduction builder numbers them.
  std::string name = fmt::format("s{}", Red->next_literal++);
  DType type = default_type(literal_kind(e));
  Value v;
  v.type = {type, true};
  v.node = Prog->add_scalar(name, type, /*weak=*/true);
  Red->scalars.push_back({name, name, type, natural_constant(e)});
  return v;
}

Value Lowerer::reduction_name(const Expr& e, Symbol& s) {
  if (s.assigned_later || s.kind == Symbol::Kind::Assigned) {
    if (!s.done || !s.assignment)
      Src.fail(ErrorKind::Usage, e.offset,
               fmt::format("'{}' is used before it is assigned on line {}", e.name,
                           Src.locate(s.assignment_offset).line));
    // Another statement's value: its expression, lowered here.
    if (Red->inline_depth == 0)
      Red->inline_origin = &e;
    Red->inlined += expression_size(s.assignment->value, kMaxInlinedNodes + 1);
    Red->nested_depth += s.assignment->value.depth;
    if (Red->inlined > kMaxInlinedNodes || Red->nested_depth > kMaxInlinedDepth)
      Src.fail(ErrorKind::Usage, Red->inline_origin->offset,
               fmt::format("reading '{}' here makes this statement {} operations {}: a statement with "
                           "reductions repeats the expression of every value it reads",
                           Red->inline_origin->name,
                           Red->inlined > kMaxInlinedNodes ? "more than " + std::to_string(kMaxInlinedNodes)
                                                           : "nested more than " + std::to_string(kMaxInlinedDepth),
                           Red->inlined > kMaxInlinedNodes ? "long" : "deep"),
               "a statement with reductions lowers every value it reads again (it never reads "
               "another kernel's output from memory): read fewer values, or fewer times");
    ++Red->inline_depth;
    Value v = lower_expr(s.assignment->value);
    --Red->inline_depth;
    Red->nested_depth -= s.assignment->value.depth;
    return v;
  }
  // (A `let` checked on its own makes nothing read: its readers do.)
  s.read_by_reduction |= !Red->checking_let;
  std::map<std::string, ir::NodeId>& nodes = Red->nodes.back();
  Value v;
  if (s.kind == Symbol::Kind::Scalar) {
    std::string kernel = reduction_kernel_name(e.name, true);
    auto it = nodes.find(e.name);
    if (it == nodes.end())
      it = nodes.emplace(e.name, Prog->add_scalar(kernel, s.dtype, /*weak=*/false)).first;
    bool listed = false;
    for (const LoweredReduction::Scalar& sc : Red->scalars)
      listed |= sc.name == kernel;
    if (!listed)
      Red->scalars.push_back({kernel, e.name, s.dtype, s.value});
    v.node = it->second;
    v.type = {s.dtype, false};
    return v;
  }
  const ArrayInfo& info = Arrays[s.array];
  std::string kernel = reduction_kernel_name(e.name, false);
  auto it = nodes.find(e.name);
  if (it == nodes.end())
    it = nodes.emplace(e.name, Prog->add_input(kernel, info.dtype)).first;
  bool listed = false;
  for (const auto& [k, symbol] : Red->inputs)
    listed |= symbol == e.name;
  if (!listed)
    Red->inputs.push_back({kernel, e.name});
  Red->reads.push_back({s.array, e.offset, Red->depth > 0, e.name});
  v.node = it->second;
  v.type = {info.dtype, false};
  v.shape = s.array;
  return v;
}

bool Lowerer::is_cols_of(int array, int main_shape) const {
  const ArrayInfo& main = Arrays[main_shape];
  const ArrayInfo& a = Arrays[array];
  if (a.dims.size() != 1 || main.dims.empty())
    return false;
  size_t last = main.dims.size() - 1;
  if (a.extents[0] >= 0 && main.extents[last] >= 0)
    return a.extents[0] == main.extents[last];
  const Dim& d = a.dims[0];
  const Dim& m = main.dims[last];
  if (d.symbol.empty() && m.symbol.empty())
    return d.extent == m.extent;
  return !d.symbol.empty() && d.symbol == m.symbol;
}

void Lowerer::lower_reduction_statement(const Assignment& a) {
  Symbol& sym = Symbols.at(a.name);
  ReductionBuild build;
  build.nodes.emplace_back();
  build.checking_let = a.local;
  std::string out_kernel = output_kernel_name(a.name);
  if (!a.local)
    build.kernel_names.insert(out_kernel);
  Red = &build;
  Prog = &build.top;
  Value v = lower_expr(a.value);
  Red = nullptr;
  Prog = &Out.program;
  sym.done = true;
  if (a.local)
    return; // checked; the statements that read it lower it again
  if (build.main < 0)
    throw Error(ErrorKind::Internal, fmt::format("'{}' was seen to reduce but has no reduction", a.name));

  const ArrayInfo& main = Arrays[build.main];
  const bool element = !v.group;
  const bool row = build.axis && *build.axis + 1 == static_cast<int>(main.dims.size());
  const int result = element ? build.main : build.keepdims ? build.reduced_keep : build.reduced;
  // Every operand is read per element of the reduced array (inside a
  // reduction, or by a value per element) or once per group.
  for (const ReductionBuild::Read& r : build.reads) {
    const ArrayInfo& info = Arrays[r.array];
    if (r.in_reduction || element) {
      if (same_shape(r.array, build.main) || (row && is_cols_of(r.array, build.main)))
        continue;
      std::string cols = row ? fmt::format(", or [{}] (read per column of each row)",
                                           main.dims.back().symbol.empty()
                                               ? std::to_string(main.dims.back().extent)
                                               : main.dims.back().symbol)
                             : std::string();
      Src.fail(ErrorKind::Shape, r.offset,
               r.in_reduction
                   ? fmt::format("'{}' is {}, but arrays read inside a reduction have the reduced "
                                 "array's shape, {}{}",
                                 r.name, info.describe(), main.describe(), cols)
                   : fmt::format("'{}' is {}, but this statement's value has the reduced array's shape, "
                                 "{}, so its operands have that shape{}",
                                 r.name, info.describe(), main.describe(), cols));
    }
    if (same_shape(r.array, result))
      continue;
    Src.fail(ErrorKind::Shape, r.offset,
             fmt::format("'{}' is {}, but this statement's value is one per group, {}, and arrays "
                         "read outside its reductions have that shape",
                         r.name, info.describe(), Arrays[result].shape_string()));
  }

  ArrayInfo out = Arrays[result];
  DType type = v.type.dtype;
  if (sym.kind == Symbol::Kind::Array) {
    const ArrayInfo& declared = Arrays[sym.array];
    if (!same_shape(sym.array, result))
      Src.fail(ErrorKind::Shape, a.offset,
               fmt::format("'{}' is declared {}, but its value {}", a.name, declared.describe(),
                           element ? describe_operand(a.value, v)
                                   : fmt::format("'{}' is reduced to {}", shorten(format_expr(a.value)),
                                                 Arrays[result].shape_string())));
    type = declared.dtype;
    out = declared;
  }
  out.name = a.name;
  out.dtype = type;
  build.top.add_output(out_kernel, type, v.node);

  std::string where = fmt::format("{}:{}", Src.filename(), Src.locate(a.offset).line);
  std::string statement = format_statement(Statement{a});
  build.plan.label = fmt::format("{}  ({})", statement, where);
  build.top.label = build.plan.label;
  ir::set_epilogue(build.plan, build.top);
  build.plan.epilogue_scope = element ? ir::EpilogueScope::Element : ir::EpilogueScope::Group;

  LoweredReduction r;
  r.plan = std::move(build.plan);
  r.main = main;
  r.axis = build.axis;
  r.keepdims = build.keepdims;
  r.scope = element ? ir::EpilogueScope::Element : ir::EpilogueScope::Group;
  r.output = Out.outputs.size();
  r.scalars = std::move(build.scalars);
  r.what = fmt::format("`{}` ({})", statement, where);
  Out.outputs.push_back(std::move(out));
  Out.reductions.push_back(std::move(r));
  ReductionInputs.push_back(std::move(build.inputs));
}

} // namespace gpukit::text::detail_lower
