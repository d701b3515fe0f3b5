// Broadcasting in the text language (NumPy rules): the lowered shapes, the
// strided engine's kernel, results on the CPU fallback (or the GPU) against
// a host reference, and the error naming both shapes.
#include "dsl/text/lower.hpp"
#include "dsl/text/parser.hpp"
#include "dsl/text/program_runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace gpukit::text {
namespace {

LoweredProgram lower_text(std::string_view text, const LowerOptions& opts = {}) {
  return lower(parse_program(text, "t.gk"), opts);
}

TEST(TextBroadcast, RowVectorBroadcastsOverRows) {
  LowerOptions opts;
  opts.sizes = {{"R", 3}, {"C", 5}};
  LoweredProgram lp = lower_text("x: f32[R, C]\nb: f32[C]\nout = x + 2 * b", opts);
  EXPECT_EQ(lp.outputs[0].describe(), "f32[R, C] = [3, 5]");
  EXPECT_EQ(lp.elements(), 15);
  CompiledProgram cp = compile_program(lp);
  ASSERT_TRUE(cp.strided.has_value());
  EXPECT_EQ(cp.strided->inputs[1][0], 0); // b: stride 0 over the rows
  EXPECT_NE(cp.cuda.source.find("__global__"), std::string::npos);

  std::vector<HostArray> in;
  for (const ArrayInfo& a : lp.inputs) {
    HostArray h = HostArray::zeros(a.dtype, a.extents);
    h.fill_random(7 + a.random_index, -1.0, 1.0);
    in.push_back(std::move(h));
  }
  ProgramRunner runner(cp, lp, 15);
  runner.upload(in);
  runner.launch();
  std::vector<HostArray> out;
  runner.download(out);
  ASSERT_EQ(out.size(), 1u);
  std::vector<float> x(15), b(5), got(15);
  std::memcpy(x.data(), in[0].data.data(), 60);
  std::memcpy(b.data(), in[1].data.data(), 20);
  std::memcpy(got.data(), out[0].data.data(), 60);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c)
      EXPECT_NEAR(got[r * 5 + c], double(x[r * 5 + c]) + 2.0 * b[c], 1e-6) << r << "," << c;
}

TEST(TextBroadcast, ColumnAndOuterShapes) {
  LowerOptions opts;
  opts.sizes = {{"R", 4}, {"C", 6}};
  // [R, 1] with [C] gives [R, C], a shape neither operand has.
  LoweredProgram lp = lower_text("a: f32[R, 1]\nb: f32[C]\nout = a * b", opts);
  EXPECT_EQ(lp.outputs[0].extents, (std::vector<int64_t>{4, 6}));
  CompiledProgram cp = compile_program(lp);
  ASSERT_TRUE(cp.strided.has_value());
  std::vector<HostArray> in;
  for (const ArrayInfo& a : lp.inputs) {
    HostArray h = HostArray::zeros(a.dtype, a.extents);
    h.fill_random(11 + a.random_index, 0.5, 2.0);
    in.push_back(std::move(h));
  }
  ProgramRunner runner(cp, lp, 24);
  runner.upload(in);
  runner.launch();
  std::vector<HostArray> out;
  runner.download(out);
  std::vector<float> a(4), b(6), got(24);
  std::memcpy(a.data(), in[0].data.data(), 16);
  std::memcpy(b.data(), in[1].data.data(), 24);
  std::memcpy(got.data(), out[0].data.data(), 96);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c)
      EXPECT_NEAR(got[r * 6 + c], double(a[r]) * b[c], 1e-5);
}

TEST(TextBroadcast, SameShapesStayOnTheContiguousKernel) {
  LowerOptions opts;
  opts.sizes = {{"N", 10}};
  CompiledProgram cp = compile_program(lower_text("x: f32[N]\ny: f32[N]\nout = x + y", opts));
  EXPECT_FALSE(cp.strided.has_value());
}

TEST(TextBroadcast, IncompatibleShapesNameBoth) {
  LowerOptions opts;
  opts.sizes = {{"R", 3}, {"C", 5}, {"K", 4}};
  try {
    lower_text("x: f32[R, C]\nb: f32[K]\nout = x + b", opts);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Shape);
    std::string m = e.what();
    EXPECT_NE(m.find("shapes do not broadcast in '+'"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[R, C] = [3, 5]"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[K] = [4]"), std::string::npos) << m;
  }
}

} // namespace
} // namespace gpukit::text
