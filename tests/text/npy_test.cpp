// .npy reading and writing: every element type round-trips, the bytes are
// NumPy's, Fortran order is transposed, and malformed files are rejected
// with a message that says what is wrong.
#include "dsl/text/npy.hpp"

#include "dsl/array.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>

namespace gpukit::text {
namespace {

std::string npy_error(std::string_view bytes) {
  try {
    parse_npy(bytes, "bad.npy");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    return e.what();
  }
  return "(no error)";
}

std::string with_header(std::string_view dict, std::string_view data) {
  std::string header(dict);
  size_t total = 10 + header.size() + 1;
  header.append((total + 63) / 64 * 64 - total, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(data);
}

TEST(Npy, BytesAreNumpys) {
  HostArray a = HostArray::zeros(DType::Float32, {3});
  for (size_t k = 0; k < 3; ++k)
    a.set(k, static_cast<double>(k));
  // What np.save(f, np.arange(3, dtype=np.float32)) writes.
  std::string expected = with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                                     std::string("\0\0\0\0\0\0\x80\x3f\0\0\0\x40", 12));
  EXPECT_EQ(to_npy(a), expected);
  EXPECT_EQ(to_npy(a).size() % 64, 12u);
}

TEST(Npy, EveryDTypeRoundTrips) {
  std::string dir = std::string(GPUKIT_BINARY_DIR) + "/tests/text-npy";
  llvm::sys::fs::create_directories(dir);
  for (DType t : AllDTypes) {
    HostArray a = HostArray::zeros(t, {2, 3});
    for (size_t k = 0; k < a.elements(); ++k)
      a.set(k, t == DType::Bool ? k % 2 : static_cast<double>(k) - (is_integer(t) && t != DType::UInt8 ? 2 : 0));
    std::string path = fmt::format("{}/{}.npy", dir, short_name(t));
    write_npy(path, a);
    HostArray b = read_npy(path);
    EXPECT_EQ(b.dtype, t);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.data, a.data) << short_name(t);
    EXPECT_NE(to_npy(a).find(std::string(npy_descr(t))), std::string::npos);
  }
}

TEST(Npy, FortranOrderIsTransposed) {
  // [[0, 1, 2], [3, 4, 5]] stored column-major: 0 3 1 4 2 5.
  std::string data;
  for (int32_t v : {0, 3, 1, 4, 2, 5})
    data.append(reinterpret_cast<const char*>(&v), 4);
  HostArray a = parse_npy(
      with_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data), "f.npy");
  ASSERT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  for (size_t k = 0; k < 6; ++k)
    EXPECT_EQ(a.get(k), static_cast<double>(k));
}

TEST(Npy, VersionsAndScalars) {
  std::string v2("\x93NUMPY\x02\x00", 8);
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n";
  uint32_t len = static_cast<uint32_t>(dict.size());
  v2.append(reinterpret_cast<const char*>(&len), 4);
  double one = 1.5;
  v2 += dict + std::string(reinterpret_cast<const char*>(&one), 8);
  HostArray a = parse_npy(v2, "v2.npy");
  EXPECT_EQ(a.shape, std::vector<int64_t>{1});
  EXPECT_EQ(a.get(0), 1.5);
}

TEST(Npy, MalformedFilesAreRejected) {
  EXPECT_EQ(npy_error("hello"),
            "bad.npy: not a usable .npy file: it does not start with the .npy magic string \\x93NUMPY");
  EXPECT_EQ(npy_error(std::string("\x93NUMPY\x07\x00", 8) + "xx"),
            "bad.npy: not a usable .npy file: format version 7.0 is not supported (1.0, 2.0, 3.0 are)");
  EXPECT_EQ(npy_error(std::string("\x93NUMPY\x01\x00\xff\x00", 10) + "{}"),
            "bad.npy: not a usable .npy file: the header claims 255 bytes but the file has 2 after the prefix");
  EXPECT_EQ(npy_error(with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd")),
            "bad.npy: not a usable .npy file: big-endian data ('>f4') is not supported; convert it "
            "with a.astype(a.dtype.newbyteorder('<'))");
  EXPECT_EQ(npy_error(with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "abcdabcd")),
            "bad.npy: not a usable .npy file: unsupported element type '<c8'; GPUkit reads bool, "
            "uint8, int32, int64, float16, bfloat16 (as '<V2'), float32 and float64");
  EXPECT_EQ(npy_error(with_header("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "abcdabcd")),
            "bad.npy: not a usable .npy file: unsupported element type '|O'; GPUkit reads bool, "
            "uint8, int32, int64, float16, bfloat16 (as '<V2'), float32 and float64");
  EXPECT_EQ(npy_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "abcd")),
            "bad.npy: not a usable .npy file: the header describes 3 elements of f32 (12 bytes) "
            "but the file holds 4 bytes of data");
  EXPECT_EQ(npy_error(with_header("{'descr': '<f4', 'shape': (1,), }", "abcd")),
            "bad.npy: not a usable .npy file: the header lacks one of 'descr', 'fortran_order' and 'shape'");
  EXPECT_EQ(npy_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "")),
            "bad.npy: not a usable .npy file: 'shape' must be a tuple of non-negative integers");
  EXPECT_EQ(npy_error(with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", "abcd")),
            "bad.npy: not a usable .npy file: 'fortran_order' must be True or False");
  EXPECT_EQ(npy_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                  "(4294967296, 4294967296, 4294967296), }",
                                  "")),
            "bad.npy: not a usable .npy file: the shape's element count overflows");
  EXPECT_EQ(npy_error(with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "\x02")),
            "bad.npy: not a usable .npy file: a bool element is neither 0 nor 1");
  EXPECT_THROW(read_npy("/nonexistent/x.npy"), Error);
}

TEST(HostArray, RandomMatchesTheDslsDraws) {
  HostArray a = HostArray::zeros(DType::Float32, {4});
  a.fill_random(7, 5.0, 30.0);
  detail::SplitMix64 rng(7);
  for (size_t k = 0; k < 4; ++k)
    EXPECT_EQ(a.get(k), static_cast<float>(5.0 + rng.uniform() * 25.0));
  HostArray b = HostArray::zeros(DType::Int32, {3});
  b.set(0, -2);
  b.set(1, 7);
  b.set(2, 1);
  EXPECT_EQ(b.summary("b"), "b: i32[3]  min -2  max 7  mean 2  [-2, 7, 1]");
}

} // namespace
} // namespace gpukit::text
