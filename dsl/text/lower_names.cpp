// Declarations, names and statements of the Lowerer (dsl/text/lowerer.hpp).
#include "dsl/text/lowerer.hpp"

#include "codegen/kernel_names.hpp"

#include "dsl/text/literal.hpp"
#include "dsl/text/parser.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <algorithm>

namespace gpukit::text::detail_lower {

std::string Lowerer::output_kernel_name(const std::string& name) const {
  return is_reserved_kernel_name(name) ? name + "_" : name;
}

// As the C++ DSL names an input (codegen::free_kernel_name): its own name
// unless reserved or taken by an output (then name_in, name_in2, ...).
std::string Lowerer::input_kernel_name(const std::string& name) {
  std::string kernel = codegen::free_kernel_name(name, "in_", "_in", [&](const std::string& c) {
    return OutputKernelNames.count(c) || InputKernelNames.count(c);
  });
  InputKernelNames.insert(kernel);
  return kernel;
}

// ---------------------------------------------------------------------------
// Declarations

void Lowerer::check_value_name(const std::string& name, Offset offset, std::string_view what) {
  if (find_dtype(name))
    Src.fail(ErrorKind::Usage, offset, fmt::format("'{}' is a type name; {} needs another name", name, what));
  if (is_reserved(name))
    Src.fail(ErrorKind::Usage, offset, fmt::format("'{}' is a reserved word; {} needs another name", name, what));
  if (find_function(name))
    Src.fail(ErrorKind::Usage, offset,
             fmt::format("'{}' is the name of a function; {} needs another name", name, what));
  // Kernel parameters cannot start so (is_reserved_kernel_name), and no
  // suffix would free them.
  if (has_reserved_prefix(name))
    Src.fail(ErrorKind::Usage, offset,
             fmt::format("'{}': names starting with '__', 'gpukit' or 'gk_' are reserved; {} needs "
                         "another name",
                         name, what));
}

void Lowerer::resolve_extents(ArrayInfo& info) {
  info.extents.clear();
  for (const Dim& d : info.dims) {
    if (d.symbol.empty()) {
      info.extents.push_back(d.extent);
      continue;
    }
    SizeNames.insert(d.symbol);
    auto it = Sizes.find(d.symbol);
    info.extents.push_back(it == Sizes.end() ? -1 : it->second);
  }
}

int Lowerer::add_array(ArrayInfo info) {
  resolve_extents(info);
  info.random_index = static_cast<unsigned>(Arrays.size() - ShapeOnlyArrays);
  Arrays.push_back(std::move(info));
  return static_cast<int>(Arrays.size() - 1);
}

int Lowerer::add_shape(ArrayInfo info) {
  resolve_extents(info);
  ++ShapeOnlyArrays;
  Arrays.push_back(std::move(info));
  return static_cast<int>(Arrays.size() - 1);
}

/// Binds the sizes of `info` from the file given for it, or checks them
/// against sizes already bound.
void Lowerer::bind_from_spec(ArrayInfo& info, const ArraySpec& spec, Offset offset, bool implicit) {
  auto shape_text = [&] {
    std::string s = "(";
    for (size_t k = 0; k < spec.shape.size(); ++k)
      s += (k ? ", " : "") + std::to_string(spec.shape[k]);
    return s + (spec.shape.size() == 1 ? ",)" : ")");
  };
  if (spec.dtype != info.dtype && !implicit)
    Src.fail(ErrorKind::Type, offset,
             fmt::format("'{}' is declared {} but {} holds {}", info.name, short_name(info.dtype),
                         spec.origin, short_name(spec.dtype)),
             fmt::format("convert the file (numpy: a.astype(...)) or declare {}: {}[...]", info.name,
                         short_name(spec.dtype)));
  if (spec.shape.size() != info.dims.size())
    Src.fail(ErrorKind::Shape, offset,
             fmt::format("'{}' is declared {} ({}-D) but {} has shape {} ({}-D)", info.name,
                         info.describe(), info.dims.size(), spec.origin, shape_text(),
                         spec.shape.size()));
  for (size_t k = 0; k < info.dims.size(); ++k) {
    const Dim& d = info.dims[k];
    int64_t have = spec.shape[k];
    if (d.symbol.empty()) {
      if (d.extent != have)
        Src.fail(ErrorKind::Shape, offset,
                 fmt::format("'{}' is declared {} but {} has shape {}", info.name, info.describe(),
                             spec.origin, shape_text()));
      continue;
    }
    auto it = Sizes.find(d.symbol);
    if (it == Sizes.end()) {
      Sizes[d.symbol] = have;
      continue;
    }
    if (it->second != have)
      Src.fail(ErrorKind::Shape, offset,
               fmt::format("'{}' is declared {} with {} = {}, but {} has shape {}", info.name,
                           info.describe(), d.symbol, it->second, spec.origin, shape_text()),
               fmt::format("drop --size {0}=... to take {0} from the file, or give a file of "
                           "that shape",
                           d.symbol));
  }
  resolve_extents(info);
}

void Lowerer::declare(const Declaration& d) {
  check_value_name(d.name, d.offset, "a declaration");
  if (auto it = Symbols.find(d.name); it != Symbols.end())
    Src.fail(ErrorKind::Usage, d.offset,
             fmt::format("'{}' is declared twice; the first declaration is on line {}", d.name,
                         Src.locate(it->second.offset).line));
  Symbol s;
  s.offset = d.offset;
  if (d.is_array) {
    if (d.shape.size() > kMaxRank)
      Src.fail(ErrorKind::Shape, d.offset,
               fmt::format("'{}' has {} dimensions; arrays have at most {}", d.name, d.shape.size(),
                           kMaxRank));
    ArrayInfo info;
    info.name = d.name;
    info.dtype = d.dtype;
    info.dims = d.shape;
    if (d.uniform.size() == 2) {
      info.random_lo = d.uniform[0].is_float ? d.uniform[0].float_value : d.uniform[0].int_value;
      info.random_hi = d.uniform[1].is_float ? d.uniform[1].float_value : d.uniform[1].int_value;
      if (!(info.random_lo < info.random_hi))
        Src.fail(ErrorKind::Usage, d.uniform[0].offset,
                 fmt::format("uniform({}, {}) needs lo < hi", format_expr(d.uniform[0]),
                             format_expr(d.uniform[1])));
    }
    resolve_extents(info);
    s.kind = Symbol::Kind::Array;
    s.array = add_array(std::move(info));
    Strict = true;
  } else {
    s.kind = Symbol::Kind::Scalar;
    s.dtype = d.dtype;
    if (d.initial) {
      ir::Constant c;
      if (auto why = convert_literal(*d.initial, d.dtype, c))
        Src.fail(ErrorKind::Type, d.initial->offset,
                 fmt::format("'{}' is declared {} but its value {} is not one: {}", d.name,
                             short_name(d.dtype), format_expr(*d.initial), *why));
      s.value = c;
    }
  }
  Symbols.emplace(d.name, std::move(s));
}

void Lowerer::declare_all() {
  for (const Statement& st : Parsed.statements)
    if (const auto* d = std::get_if<Declaration>(&st))
      declare(*d);
  // Files given for inputs bind sizes first, in declaration order, so
  // every later check sees them.
  for (auto& [name, sym] : Symbols) {
    if (sym.kind != Symbol::Kind::Array)
      continue;
    auto spec = Options.inputs.find(name);
    if (spec == Options.inputs.end())
      continue;
    bind_from_spec(Arrays[sym.array], spec->second, sym.offset, false);
    UsedInputOptions.insert(name);
  }
  for (ArrayInfo& a : Arrays)
    resolve_extents(a);
  // --scalar values override declared ones (after the declarations, so the
  // error can say the declared type).
  for (auto& [name, sym] : Symbols) {
    if (sym.kind != Symbol::Kind::Scalar)
      continue;
    auto it = Options.scalars.find(name);
    if (it == Options.scalars.end())
      continue;
    sym.value = parse_scalar_value(it->second, sym.dtype, name);
    UsedScalarOptions.insert(name);
  }
}

void Lowerer::collect_assignments() {
  for (const Statement& st : Parsed.statements) {
    const auto* a = std::get_if<Assignment>(&st);
    if (!a)
      continue;
    check_value_name(a->name, a->offset, a->local ? "a `let` value" : "an output");
    auto it = Symbols.find(a->name);
    if (it == Symbols.end()) {
      Symbol s;
      s.kind = Symbol::Kind::Assigned;
      s.offset = a->offset;
      s.assigned_later = true;
      s.assignment_offset = a->offset;
      s.assignment = a;
      Symbols.emplace(a->name, std::move(s));
      continue;
    }
    Symbol& s = it->second;
    if (s.assigned_later)
      Src.fail(ErrorKind::Usage, a->offset,
               fmt::format("'{}' is assigned twice; the first assignment is on line {}", a->name,
                           Src.locate(s.assignment_offset).line),
               "give the second value another name");
    if (s.kind == Symbol::Kind::Scalar)
      Src.fail(ErrorKind::Usage, a->offset,
               fmt::format("'{}' is declared as a scalar on line {}; it cannot be assigned",
                           a->name, Src.locate(s.offset).line));
    if (a->local)
      Src.fail(ErrorKind::Usage, a->offset,
               fmt::format("'{}' is declared as an array on line {}, so it is an output; "
                           "drop `let` or the declaration",
                           a->name, Src.locate(s.offset).line));
    s.assigned_later = true;
    s.assignment_offset = a->offset;
    s.assignment = a;
  }
  for (const Statement& st : Parsed.statements)
    if (const auto* a = std::get_if<Assignment>(&st); a && !a->local)
      OutputKernelNames.insert(output_kernel_name(a->name));
}

// ---------------------------------------------------------------------------
// Statements

void Lowerer::lower_assignment(const Assignment& a) {
  Value v = lower_expr(a.value);
  Symbol& s = Symbols.at(a.name);
  s.done = true;
  if (a.local) {
    s.result = v;
    return;
  }
  int shape = v.shape;
  DType type = v.type.dtype;
  if (s.kind == Symbol::Kind::Array) {
    // Declared output: its type, and its shape, which the value must have.
    const ArrayInfo& declared = Arrays[s.array];
    type = declared.dtype;
    if (shape >= 0 && !same_shape(shape, s.array))
      Src.fail(ErrorKind::Shape, a.offset,
               fmt::format("'{}' is declared {}, but its value {}", a.name, declared.describe(),
                           describe_operand(a.value, v)));
    shape = s.array;
  }
  if (shape < 0)
    shape = ProgramShape;
  if (shape < 0 && !Strict) {
    ArrayInfo info;
    info.name = a.name;
    info.dims.push_back(Dim{std::string(kImplicitSize), 0, a.offset});
    shape = add_array(std::move(info));
  }
  if (shape < 0)
    Src.fail(ErrorKind::Shape, a.offset,
             fmt::format("'{}' reads no array, so its shape is unknown", a.name),
             fmt::format("declare it, e.g. {}: {}[N]", a.name, short_name(type)));
  if (ProgramShape >= 0 && !same_shape(ProgramShape, shape)) {
    Src.fail(ErrorKind::Shape, a.offset,
             fmt::format("outputs differ in shape: '{}' is {}, but '{}' is {}", FirstOutputName,
                         Arrays[ProgramShape].describe(), a.name, Arrays[shape].describe()),
             "a program is one elementwise kernel: all its outputs have one shape");
  }
  if (ProgramShape < 0) {
    ProgramShape = shape;
    FirstOutputName = a.name;
  }
  ArrayInfo out = Arrays[shape];
  out.name = a.name;
  out.dtype = type;
  Prog->add_output(output_kernel_name(a.name), type, v.node);
  Out.elementwise_outputs.push_back(Out.outputs.size());
  Out.outputs.push_back(std::move(out));
  s.result = v;
  if (!Label.empty())
    Label += "; ";
  else
    LabelOffset = a.offset;
  Label += format_statement(Statement{a});
}

void Lowerer::finish() {
  if (Out.outputs.empty())
    Src.fail(ErrorKind::Usage, static_cast<Offset>(Src.text().size()),
             "the program writes no output", "add an assignment such as `out = x * 2`");
  for (const auto& [name, sym] : Symbols) {
    if (sym.kind == Symbol::Kind::Array && !sym.input && !sym.assigned_later && !sym.read_by_reduction)
      Out.warnings.push_back(fmt::format("{}:{}: '{}' is declared but never read; it is not a kernel operand",
                                         Src.filename(), Src.locate(sym.offset).line, name));
    if (sym.kind == Symbol::Kind::Scalar && !sym.scalar && !sym.read_by_reduction)
      Out.warnings.push_back(fmt::format("{}:{}: scalar '{}' is declared but never read",
                                         Src.filename(), Src.locate(sym.offset).line, name));
  }
  // Every command-line binding must name something in the program: a typo
  // there would otherwise pass silently.
  for (const auto& [name, value] : Options.sizes)
    if (!SizeNames.count(name))
      throw Error(ErrorKind::Usage,
                  fmt::format("--size {}={}: the program has no size named '{}' (its sizes: {}){}",
                              name, value, name, join_names(SizeNames),
                              did_you_mean(name, {SizeNames.begin(), SizeNames.end()})));
  for (const auto& [name, value] : Options.scalars)
    if (!UsedScalarOptions.count(name))
      throw Error(ErrorKind::Usage,
                  fmt::format("--scalar {}={}: the program has no scalar named '{}'", name, value, name));
  for (const auto& [name, spec] : Options.inputs) {
    auto it = Symbols.find(name);
    if (it != Symbols.end() && it->second.kind == Symbol::Kind::Array && it->second.assigned_later)
      throw Error(ErrorKind::Usage,
                  fmt::format("--input {}={}: '{}' is an output of the program, not an input", name,
                              spec.origin, name));
    if (!UsedInputOptions.count(name))
      throw Error(ErrorKind::Usage,
                  fmt::format("--input {}={}: the program has no input named '{}'", name,
                              spec.origin, name));
  }
  for (const std::string& n : SizeNames) {
    auto it = Sizes.find(n);
    Out.sizes[n] = it == Sizes.end() ? -1 : it->second;
  }
  // The inputs only reductions read come after the elementwise kernel's.
  for (size_t r = 0; r < Out.reductions.size(); ++r) {
    for (const std::pair<std::string, std::string>& input : ReductionInputs[r]) {
      const std::string& symbol = input.second;
      auto same = [&](const ArrayInfo& a) { return a.name == symbol; };
      auto it = std::find_if(Out.inputs.begin(), Out.inputs.end(), same);
      size_t index = static_cast<size_t>(it - Out.inputs.begin());
      if (it == Out.inputs.end())
        Out.inputs.push_back(Arrays[Symbols.at(symbol).array]);
      Out.reductions[r].inputs.push_back({input.first, index});
    }
  }
  // Extents bound by a file read after an array was recorded.
  for (ArrayInfo& a : Out.inputs)
    resolve_extents(a);
  for (ArrayInfo& a : Out.outputs)
    resolve_extents(a);
  for (LoweredReduction& r : Out.reductions)
    resolve_extents(r.main);
  if (!Label.empty())
    Out.program.label = fmt::format("{}  ({}:{})", Label, Src.filename(), Src.locate(LabelOffset).line);
}

LoweredProgram Lowerer::run() {
  declare_all();
  collect_assignments();
  for (const Statement& st : Parsed.statements) {
    const auto* a = std::get_if<Assignment>(&st);
    if (!a)
      continue;
    // A statement reduces when it calls a reduction or reads a value that
    // does (only earlier statements' values can be read).
    Symbol& s = Symbols.at(a->name);
    s.reduces = contains_reduction(a->value);
    if (s.reduces)
      lower_reduction_statement(*a);
    else
      lower_assignment(*a);
  }
  finish();
  return std::move(Out);
}

} // namespace gpukit::text::detail_lower
