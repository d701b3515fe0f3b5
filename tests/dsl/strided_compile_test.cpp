// Every strided kernel class the DSL produces (broadcast rows and columns,
// transposes, stepped slices, 3-D and 4-D permutes, unaligned offsets,
// f16/f64/i64, 64-bit offsets) must be CUDA that NVRTC accepts for sm_80 and
// sm_90. The source comes from inspect(), which builds without running, so
// this runs on machines without a GPU; it skips only without NVRTC.
#include "codegen/cuda_strided_emitter.hpp"
#include "codegen/passes/pipeline.hpp"
#include "dsl/gpukit.hpp"
#include "runtime/nvrtc_api.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "support/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpukit {
namespace {

class StridedCompile : public ::testing::Test {
protected:
  void SetUp() override {
    Api = rt::NvrtcApi::load();
    if (!Api)
      GTEST_SKIP() << "NVRTC unavailable: " << rt::NvrtcApi::load_error();
  }

  /// Compiles `k` for sm_80 and sm_90; a failure shows NVRTC's log and the source.
  void expect_compiles(const std::string& what, const std::string& name, const std::string& source,
                       const std::vector<std::string>& options = {"--fmad=false"}) {
    rt::NvrtcCompiler compiler(*Api);
    std::vector<std::string> opts = options;
    opts.push_back(std::string("--include-path=") + GPUKIT_SOURCE_DIR);
    for (const char* arch : {"sm_80", "sm_90"}) {
      try {
        rt::CompileResult r = compiler.compile(name, source, arch, opts);
        EXPECT_FALSE(r.cubin.empty()) << what << " " << arch;
      } catch (const Error& e) {
        ADD_FAILURE() << what << " (" << arch << "):\n" << e.what();
      }
    }
  }
  void expect_compiles(const std::string& what, const KernelInfo& info) {
    // The DSL must have taken the strided path for these cases.
    EXPECT_NE(info.source.find("strided"), std::string::npos) << what << ":\n" << info.source;
    expect_compiles(what, info.name, info.source);
  }

  const rt::NvrtcApi* Api = nullptr;
};

TEST_F(StridedCompile, BroadcastRow) {
  auto x = Array<float>::arange({5, 7}).named("x");
  auto b = Array<float>::arange({7}).named("b");
  Array<float> out(Shape{5, 7});
  expect_compiles("x[R,C] + b[C]", inspect(out, x + b));
}

TEST_F(StridedCompile, BroadcastColumn) {
  auto x = Array<float>::arange({5, 7}).named("x");
  auto s = Array<float>::arange({5, 1}).named("s");
  Array<float> out(Shape{5, 7});
  expect_compiles("x[R,C] * s[R,1]", inspect(out, x * s));
}

TEST_F(StridedCompile, TransposeCopy) {
  auto m = Array<float>::arange({6, 9}).named("m");
  Array<float> out(Shape{9, 6});
  expect_compiles("out = m.T", inspect(out, m.transpose()));
  expect_compiles("out = m.T * 2", inspect(out, m.transpose() * 2.0f));
}

TEST_F(StridedCompile, SliceWithStepAndReversal) {
  auto m = Array<float>::arange({8, 10}).named("m");
  Array<float> out(Shape{4, 5});
  expect_compiles("m[::2, 1::2]", inspect(out, m.slice({Slice(0, 8, 2), Slice(1, 10, 2)}) + 1.0f));
  Array<float> rev(Shape{8, 10});
  expect_compiles("m[:, ::-1]", inspect(rev, m.slice(1, Slice::reversed()) * 3.0f));
}

TEST_F(StridedCompile, Permute3DAnd4D) {
  auto c = Array<float>::arange({2, 3, 4}).named("c");
  Array<float> o3(Shape{4, 2, 3});
  expect_compiles("permute 3-D", inspect(o3, c.permute({2, 0, 1}) + 0.5f));
  auto d = Array<float>::arange({2, 3, 4, 5}).named("d");
  Array<float> o4(Shape{5, 3, 2, 4});
  expect_compiles("permute 4-D", inspect(o4, d.permute({3, 1, 0, 2}) - 1.0f));
  // A 4-D broadcast of a permuted and a dense operand: several Strided axes.
  auto e = Array<float>::arange({5, 3, 2, 1}).named("e");
  expect_compiles("permute 4-D * broadcast", inspect(o4, d.permute({3, 1, 0, 2}) * e));
}

TEST_F(StridedCompile, OffsetViewsBreakAlignment) {
  auto m = Array<float>::arange({9, 9}).named("m");
  Array<float> out(Shape{7, 7});
  expect_compiles("m[1:8, 1:8]", inspect(out, m.slice({Slice(1, 8), Slice(1, 8)}) * 2.0f));
  // Assignment into an offset view of an output.
  auto dst = m.slice({Slice(2, 9), Slice(1, 8)});
  auto src = Array<float>::arange({7, 7}).named("src");
  expect_compiles("m[2:9, 1:8] = src + 1", inspect(dst, src + 1.0f));
}

TEST_F(StridedCompile, OtherDTypes) {
  auto h = Array<half>::arange({4, 6}).named("h");
  auto hb = Array<half>::arange({6}).named("hb");
  Array<half> oh(Shape{4, 6});
  expect_compiles("f16 broadcast", inspect(oh, h + hb));
  Array<half> oht(Shape{6, 4});
  expect_compiles("f16 transpose", inspect(oht, h.transpose() * half(2.0f)));

  auto d = Array<double>::arange({4, 6}).named("d");
  auto dc = Array<double>::arange({4, 1}).named("dc");
  Array<double> od(Shape{4, 6});
  expect_compiles("f64 column broadcast", inspect(od, sin(d) * dc));

  auto i = Array<int64_t>::arange({4, 6}).named("i");
  auto ib = Array<int64_t>::arange({6}).named("ib");
  Array<int64_t> oi(Shape{6, 4});
  expect_compiles("i64 transpose + broadcast", inspect(oi, i.transpose() % 5 + ib.slice({Slice(0, 4)})));
}

TEST_F(StridedCompile, TwoOutputs) {
  auto x = Array<float>::arange({5, 7}).named("x");
  auto b = Array<float>::arange({7}).named("b");
  Array<float> o1(Shape{5, 7}), o2(Shape{7, 5});
  auto t = o2.transpose();
  expect_compiles("two outputs, one transposed", inspect(o1, x + b, t, x * b));
}

// 64-bit offsets: an array of 2^31 elements is too large to allocate here,
// so the emitter is driven directly with index64 (as the DSL sets it).
TEST_F(StridedCompile, Index64) {
  ir::Program p;
  auto x = p.add_input("x", DType::Float32);
  auto b = p.add_input("b", DType::Float32);
  p.add_output("out", DType::Float32, p.add(ir::Op::Add, {x, b}));
  p.label = "out = x + b";
  codegen::StridedArgs args;
  args.rank = 2;
  args.extents = {1 << 16, 1 << 16};
  args.inputs = {{int64_t(1) << 17, 2}, {0, 1}};
  args.outputs = {{1 << 16, 1}};
  ASSERT_TRUE(codegen::strided_needs_index64(args));
  codegen::EmitOptions o{{256, 1}, false, true};
  codegen::CudaKernel k = codegen::emit_strided_cuda(ir::optimize(p), o, codegen::classify(args));
  EXPECT_NE(k.source.find("long long"), std::string::npos) << k.source;
  expect_compiles("index64", k.name, k.source, k.nvrtc_options);
}

} // namespace
} // namespace gpukit
