// Expressions of the Lowerer (dsl/text/lowerer.hpp), and lower().
#include "dsl/text/lowerer.hpp"

#include "dsl/text/literal.hpp"
#include "dsl/text/parser.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

namespace gpukit::text::detail_lower {

// ---------------------------------------------------------------------------
// Expressions

std::vector<std::string_view> Lowerer::known_value_names() const {
  std::vector<std::string_view> names;
  for (const auto& [name, sym] : Symbols)
    names.push_back(name);
  return names;
}

std::string Lowerer::describe_operand(const Expr& e, const Value& v) const {
  std::string text = format_expr(e);
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  if (v.shape < 0)
    return fmt::format("'{}' (a scalar)", text);
  if (v.group)
    return fmt::format("'{}' is reduced to {}", text, Arrays[v.shape].shape_string());
  const ArrayInfo& a = Arrays[v.shape];
  if (e.kind == ExprKind::Name && e.name == a.name)
    return fmt::format("'{}' is {}", text, a.describe());
  return fmt::format("'{}' has the shape of '{}', {}", text, a.name, a.describe());
}

bool Lowerer::same_shape(int a, int b) const {
  if (a == b || a < 0 || b < 0)
    return true;
  const ArrayInfo& x = Arrays[a];
  const ArrayInfo& y = Arrays[b];
  if (x.dims.size() != y.dims.size())
    return false;
  for (size_t k = 0; k < x.dims.size(); ++k) {
    if (x.extents[k] >= 0 && y.extents[k] >= 0) {
      if (x.extents[k] != y.extents[k])
        return false;
      continue;
    }
    if (x.dims[k].symbol.empty() || x.dims[k].symbol != y.dims[k].symbol)
      return false;
  }
  return true;
}

std::optional<int> Lowerer::broadcast_shapes(int a, int b) {
  if (same_shape(a, b))
    return a;
  const ArrayInfo& x = Arrays[a];
  const ArrayInfo& y = Arrays[b];
  size_t rank = std::max(x.dims.size(), y.dims.size());
  // NumPy rules: align the trailing dimensions; each pair is equal, or one
  // of them is 1 and the other is the result's.
  auto is_one = [](const ArrayInfo& info, size_t k) {
    return info.extents[k] == 1 || (info.dims[k].symbol.empty() && info.dims[k].extent == 1);
  };
  ArrayInfo result = x.dims.size() >= y.dims.size() ? x : y;
  bool is_x = true, is_y = true;
  for (size_t k = 0; k < rank; ++k) {
    size_t from_end = rank - 1 - k;
    bool in_x = from_end < x.dims.size(), in_y = from_end < y.dims.size();
    size_t kx = x.dims.size() - 1 - from_end, ky = y.dims.size() - 1 - from_end;
    if (!in_x) {
      is_x = false;
      continue; // result takes y's dimension (result is y-shaped here)
    }
    if (!in_y) {
      is_y = false;
      continue;
    }
    bool equal = (x.extents[kx] >= 0 && x.extents[kx] == y.extents[ky]) ||
                 (!x.dims[kx].symbol.empty() && x.dims[kx].symbol == y.dims[ky].symbol) ||
                 (x.dims[kx].symbol.empty() && y.dims[ky].symbol.empty() &&
                  x.dims[kx].extent == y.dims[ky].extent);
    if (equal)
      continue;
    if (is_one(y, ky)) {
      is_y = false;
      result.dims[k] = x.dims[kx];
      result.extents[k] = x.extents[kx];
    } else if (is_one(x, kx)) {
      is_x = false;
      result.dims[k] = y.dims[ky];
      result.extents[k] = y.extents[ky];
    } else {
      return std::nullopt;
    }
  }
  if (is_x)
    return a;
  if (is_y)
    return b;
  result.name = fmt::format("{} broadcast with {}", x.name, y.name);
  return add_array(std::move(result));
}

int Lowerer::merge_shapes(llvm::ArrayRef<const Expr*> exprs, llvm::ArrayRef<Value> args, Offset at,
                          std::string_view what) {
  int first = -1;
  size_t first_arg = 0;
  for (size_t k = 0; k < args.size(); ++k) {
    if (args[k].shape < 0)
      continue;
    if (first < 0) {
      first = args[k].shape;
      first_arg = k;
      continue;
    }
    if (std::optional<int> merged = broadcast_shapes(first, args[k].shape)) {
      first = *merged;
      continue;
    }
    bool unbound = !Arrays[first].bound() || !Arrays[args[k].shape].bound();
    Src.fail(ErrorKind::Shape, at,
             fmt::format("shapes do not broadcast in {}: {}, but {}", what,
                         describe_operand(*exprs[first_arg], args[first_arg]),
                         describe_operand(*exprs[k], args[k])),
             unbound ? "sizes are compared by name until bound; bind them with --size"
                     : "broadcasting (NumPy rules) needs each trailing dimension pair to be equal "
                       "or 1");
  }
  return first;
}

Value Lowerer::make_op(ir::Op op, llvm::ArrayRef<const Expr*> exprs, llvm::ArrayRef<Value> args,
                       Offset at, std::string_view what) {
  Value v;
  if (std::optional<Value> g = combine_groups(exprs, args, at, what))
    v = *g;
  else
    v.shape = merge_shapes(exprs, args, at, what);
  llvm::SmallVector<ir::NodeId, 3> nodes;
  for (const Value& a : args)
    nodes.push_back(a.node);
  v.node = Prog->add(op, nodes);
  if (op == ir::Op::Select) {
    v.type = promote_all({args[1].type, args[2].type});
  } else if (args.size() == 1) {
    v.type = apply_rule(op, args[0].type);
  } else if (args.size() == 2) {
    v.type = apply_rule(op, promote_all({args[0].type, args[1].type}));
  } else {
    v.type = apply_rule(op, promote_all({args[0].type, args[1].type, args[2].type}));
  }
  return v;
}

Value Lowerer::lower_literal(const Expr& e) {
  if (Red)
    return reduction_literal(e);
  ScalarKind kind = literal_kind(e);
  // s<k> is reserved for literals: user names of that form are renamed.
  // Equal floating literals share one scalar, as equal C++ scalars do in
  // the DSL (gpukit::detail::shares_scalar_slot), so CSE merges what is
  // computed from them and both front ends build the same kernel.
  unsigned slot = NextLiteral++;
  ir::Constant value = natural_constant(e);
  Value v;
  v.type = {default_type(kind), true};
  for (const auto& [seen, node] : Literals) {
    if (gpukit::detail::shares_scalar_slot(seen, value)) {
      v.node = node;
      return v;
    }
  }
  v.node = Prog->add_scalar(fmt::format("s{}", slot), default_type(kind), /*weak=*/true);
  Out.scalar_values.push_back(value);
  Literals.push_back({value, v.node});
  return v;
}

Value Lowerer::lower_name(const Expr& e) {
  auto it = Symbols.find(e.name);
  if (it == Symbols.end()) {
    if (find_function(e.name))
      Src.fail(ErrorKind::Usage, e.offset,
               fmt::format("'{}' is a function; call it, as in {}(x)", e.name, e.name));
    if (find_dtype(e.name))
      Src.fail(ErrorKind::Usage, e.offset,
               fmt::format("'{}' is a type; convert a value with {}(x)", e.name, e.name));
    if (Strict)
      Src.fail(ErrorKind::Parse, e.offset,
               fmt::format("unknown name '{}'{}", e.name, did_you_mean(e.name, known_value_names())),
               "this program declares its arrays, so every input needs a declaration such as "
               "x: f32[N]");
    // A one-liner: the name is a scalar given on the command line or an f32[N] input.
    check_value_name(e.name, e.offset, "an input");
    Symbol s;
    s.offset = e.offset;
    if (auto sc = Options.scalars.find(e.name); sc != Options.scalars.end()) {
      Expr lit = parse_expression(sc->second, "--scalar " + e.name);
      DType t = lit.kind == ExprKind::Bool ? DType::Bool : lit.is_float ? DType::Float32 : DType::Int32;
      s.kind = Symbol::Kind::Scalar;
      s.dtype = t;
      s.value = parse_scalar_value(sc->second, t, e.name);
      UsedScalarOptions.insert(e.name);
    } else {
      ArrayInfo info;
      info.name = e.name;
      info.dims.push_back(Dim{std::string(kImplicitSize), 0, e.offset});
      resolve_extents(info);
      if (auto spec = Options.inputs.find(e.name); spec != Options.inputs.end()) {
        info.dtype = spec->second.dtype;
        if (spec->second.shape.size() != 1) {
          info.dims.clear();
          for (int64_t x : spec->second.shape)
            info.dims.push_back(Dim{"", x, e.offset});
        }
        bind_from_spec(info, spec->second, e.offset, true);
        UsedInputOptions.insert(e.name);
        for (ArrayInfo& a : Arrays)
          resolve_extents(a);
      }
      s.kind = Symbol::Kind::Array;
      s.array = add_array(std::move(info));
    }
    it = Symbols.emplace(e.name, std::move(s)).first;
  }
  Symbol& s = it->second;
  if (Red)
    return reduction_name(e, s);
  if (s.assigned_later || s.kind == Symbol::Kind::Assigned) {
    if (!s.result)
      Src.fail(ErrorKind::Usage, e.offset,
               fmt::format("'{}' is used before it is assigned on line {}", e.name,
                           Src.locate(s.assignment_offset).line));
    return *s.result;
  }
  Value v;
  if (s.kind == Symbol::Kind::Scalar) {
    if (!s.scalar) {
      std::string kernel = is_reserved_kernel_name(e.name) || OutputKernelNames.count(e.name) ||
                                   InputKernelNames.count(e.name)
                               ? e.name + "_arg"
                               : e.name;
      InputKernelNames.insert(kernel);
      s.scalar = Prog->add_scalar(kernel, s.dtype, /*weak=*/false);
      Out.scalar_values.push_back(s.value);
    }
    v.node = *s.scalar;
    v.type = {s.dtype, false};
    return v;
  }
  const ArrayInfo& info = Arrays[s.array];
  if (!s.input) {
    s.input = Prog->add_input(input_kernel_name(e.name), info.dtype);
    Out.inputs.push_back(info);
  }
  v.node = *s.input;
  v.type = {info.dtype, false};
  v.shape = s.array;
  return v;
}

Value Lowerer::lower_cast(const Expr& e, DType to) {
  if (e.args.size() != 1 || (!e.keywords.empty() && !e.keywords[0].empty()))
    Src.fail(ErrorKind::Usage, e.offset,
             fmt::format("{}() takes 1 argument, given {}", e.name, e.args.size()));
  const Expr& arg = e.args[0];
  Value v;
  if (arg.kind == ExprKind::Number || arg.kind == ExprKind::Bool) {
    // A typed constant: the pipeline folds the cast.
    v.node = Prog->add_cast(to, Prog->add_constant(natural_constant(arg)));
  } else {
    Value a = lower_expr(arg);
    v.node = Prog->add_cast(to, a.node);
    v.shape = a.shape;
  }
  v.type = {to, false};
  return v;
}

Value Lowerer::lower_call(const Expr& e) {
  if (std::optional<DType> to = find_dtype(e.name))
    return lower_cast(e, *to);
  const FunctionInfo* f = find_function(e.name);
  if (!f) {
    auto sym = Symbols.find(e.name);
    if (sym != Symbols.end())
      Src.fail(ErrorKind::Usage, e.offset,
               fmt::format("'{}' is {}, not a function", e.name,
                           sym->second.kind == Symbol::Kind::Scalar ? "a scalar" : "an array"));
    std::vector<std::string_view> candidates = function_names();
    for (std::string_view t : dtype_names())
      candidates.push_back(t);
    Src.fail(ErrorKind::Parse, e.offset,
             fmt::format("unknown function '{}'{}", e.name, did_you_mean(e.name, candidates)));
  }
  if (is_reduction_call(e))
    return lower_reduction_call(e, *f);
  bool has_keyword = false;
  for (const std::string& k : e.keywords)
    has_keyword |= !k.empty();
  if (has_keyword)
    Src.fail(ErrorKind::Usage, e.offset,
             fmt::format("{}() takes no keyword arguments; only reductions take an axis", f->name));
  if (static_cast<int>(e.args.size()) < f->min_args || static_cast<int>(e.args.size()) > f->max_args)
    Src.fail(ErrorKind::Usage, e.offset,
             fmt::format("{}() takes {} argument{}, given {}", f->name, f->min_args,
                         f->min_args == 1 ? "" : "s", e.args.size()));
  llvm::SmallVector<Value, 3> args;
  llvm::SmallVector<const Expr*, 3> exprs;
  for (const Expr& a : e.args) {
    args.push_back(lower_expr(a));
    exprs.push_back(&a);
  }
  return make_op(f->op, exprs, args, e.offset, fmt::format("{}()", f->name));
}

Value Lowerer::lower_expr(const Expr& e) {
  switch (e.kind) {
  case ExprKind::Number:
  case ExprKind::Bool: return lower_literal(e);
  case ExprKind::Name: return lower_name(e);
  case ExprKind::Call: return lower_call(e);
  case ExprKind::Unary: {
    Value a = lower_expr(e.args[0]);
    if (e.name == "+")
      return a;
    const Expr* exprs[] = {&e.args[0]};
    return make_op(e.name == "-" ? ir::Op::Neg : ir::Op::Not, exprs, {a}, e.offset,
                   fmt::format("'{}'", e.name));
  }
  case ExprKind::Binary: {
    std::optional<ir::Op> op = binary_op(e.name);
    if (!op)
      Src.fail(ErrorKind::Internal, e.offset, fmt::format("unknown operator '{}'", e.name));
    Value a = lower_expr(e.args[0]);
    Value b = lower_expr(e.args[1]);
    const Expr* exprs[] = {&e.args[0], &e.args[1]};
    return make_op(*op, exprs, {a, b}, e.offset, fmt::format("'{}'", e.name));
  }
  case ExprKind::Ternary: {
    Value c = lower_expr(e.args[0]);
    Value a = lower_expr(e.args[1]);
    Value b = lower_expr(e.args[2]);
    const Expr* exprs[] = {&e.args[0], &e.args[1], &e.args[2]};
    return make_op(ir::Op::Select, exprs, {c, a, b}, e.offset, "'?:'");
  }
  }
  llvm_unreachable("unknown ExprKind");
}

} // namespace gpukit::text::detail_lower

namespace gpukit::text {

// ---------------------------------------------------------------------------

LoweredProgram lower(const ParsedProgram& parsed, const LowerOptions& options) {
  return detail_lower::Lowerer(parsed, options).run();
}

} // namespace gpukit::text
