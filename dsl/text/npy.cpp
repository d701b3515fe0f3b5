#include "dsl/text/npy.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>
#include <optional>

namespace gpukit::text {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void fail(std::string_view origin, std::string_view message) {
  throw Error(ErrorKind::Io, fmt::format("{}: not a usable .npy file: {}", origin, message));
}

/// The header dictionary: {'descr': '<f4', 'fortran_order': False, 'shape': (3,), }
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;
};

class HeaderParser {
public:
  HeaderParser(std::string_view text, std::string_view origin) : Text(text), Origin(origin) {}

  Header parse() {
    Header h;
    skip();
    expect('{');
    while (true) {
      skip();
      if (peek() == '}')
        break;
      std::string key = string_literal();
      skip();
      expect(':');
      skip();
      if (key == "descr") {
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        fail(Origin, fmt::format("unexpected key '{}' in the header", key));
      }
      skip();
      if (peek() == ',') {
        ++Pos;
        continue;
      }
      skip();
      if (peek() != '}')
        fail(Origin, "malformed header dictionary (expected ',' or '}')");
    }
    expect('}');
    skip();
    if (Pos != Text.size())
      fail(Origin, "unexpected text after the header dictionary");
    if (!h.descr || !h.fortran_order || !h.shape)
      fail(Origin, "the header lacks one of 'descr', 'fortran_order' and 'shape'");
    return h;
  }

private:
  char peek() const { return Pos < Text.size() ? Text[Pos] : '\0'; }
  void skip() {
    while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\t' || Text[Pos] == '\n'))
      ++Pos;
  }
  void expect(char c) {
    if (peek() != c)
      fail(Origin, fmt::format("malformed header dictionary (expected '{}')", c));
    ++Pos;
  }
  std::string string_literal() {
    char q = peek();
    if (q != '\'' && q != '"')
      fail(Origin, "malformed header dictionary (expected a quoted string)");
    size_t end = Text.find(q, Pos + 1);
    if (end == std::string_view::npos)
      fail(Origin, "malformed header dictionary (unterminated string)");
    std::string s(Text.substr(Pos + 1, end - Pos - 1));
    Pos = end + 1;
    return s;
  }
  bool boolean() {
    if (Text.substr(Pos, 4) == "True") {
      Pos += 4;
      return true;
    }
    if (Text.substr(Pos, 5) == "False") {
      Pos += 5;
      return false;
    }
    fail(Origin, "'fortran_order' must be True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (true) {
      skip();
      if (peek() == ')')
        break;
      int64_t v = 0;
      size_t start = Pos;
      while (Pos < Text.size() && Text[Pos] >= '0' && Text[Pos] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
          fail(Origin, "a dimension in 'shape' is too large");
        v = v * 10 + (Text[Pos++] - '0');
      }
      if (Pos == start)
        fail(Origin, "'shape' must be a tuple of non-negative integers");
      if (Pos < Text.size() && Text[Pos] == 'L') // Python 2's long suffix
        ++Pos;
      dims.push_back(v);
      skip();
      if (peek() == ',') {
        ++Pos;
        continue;
      }
      skip();
      if (peek() != ')')
        fail(Origin, "'shape' must be a tuple of non-negative integers");
    }
    expect(')');
    return dims;
  }

  std::string_view Text;
  std::string_view Origin;
  size_t Pos = 0;
};

DType dtype_from_descr(const std::string& descr, std::string_view origin) {
  if (descr == "bfloat16")
    return DType::BFloat16;
  if (descr.size() < 2)
    fail(origin, fmt::format("unsupported element type '{}'", descr));
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order == '>' && code != "b1" && code != "u1" && code != "i1")
    fail(origin, fmt::format("big-endian data ('{}') is not supported; convert it with "
                             "a.astype(a.dtype.newbyteorder('<'))",
                             descr));
  if (order != '<' && order != '|' && order != '=' && order != '>')
    fail(origin, fmt::format("unsupported element type '{}'", descr));
  if (code == "b1")
    return DType::Bool;
  if (code == "u1")
    return DType::UInt8;
  if (code == "i4")
    return DType::Int32;
  if (code == "i8")
    return DType::Int64;
  if (code == "f2")
    return DType::Float16;
  if (code == "f4")
    return DType::Float32;
  if (code == "f8")
    return DType::Float64;
  if (code == "V2")
    return DType::BFloat16;
  fail(origin, fmt::format("unsupported element type '{}'; GPUkit reads bool, uint8, int32, int64, "
                           "float16, bfloat16 (as '<V2'), float32 and float64",
                           descr));
}

uint64_t read_le(const char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t k = 0; k < bytes; ++k)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[k])) << (8 * k);
  return v;
}

/// Rewrites Fortran-ordered `data` (column-major) in C order.
std::vector<std::byte> fortran_to_c(const std::vector<std::byte>& data,
                                    const std::vector<int64_t>& shape, size_t item) {
  size_t n = data.size() / item;
  std::vector<std::byte> out(data.size());
  size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  // Strides of the Fortran layout, in elements.
  std::vector<size_t> fstride(rank, 1);
  for (size_t d = 1; d < rank; ++d)
    fstride[d] = fstride[d - 1] * static_cast<size_t>(shape[d - 1]);
  for (size_t c = 0; c < n; ++c) {
    size_t f = 0;
    for (size_t d = 0; d < rank; ++d)
      f += static_cast<size_t>(index[d]) * fstride[d];
    std::memcpy(out.data() + c * item, data.data() + f * item, item);
    for (size_t d = rank; d-- > 0;) { // advance the C-order index
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

} // namespace

std::string_view npy_descr(DType t) {
  switch (t) {
  case DType::Bool: return "|b1";
  case DType::UInt8: return "|u1";
  case DType::Int32: return "<i4";
  case DType::Int64: return "<i8";
  case DType::Float16: return "<f2";
  case DType::BFloat16: return "<V2";
  case DType::Float32: return "<f4";
  case DType::Float64: return "<f8";
  }
  llvm_unreachable("unknown DType");
}

HostArray parse_npy(std::string_view bytes, std::string_view origin) {
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    fail(origin, "it does not start with the .npy magic string \\x93NUMPY");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t length_bytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (!length_bytes)
    fail(origin, fmt::format("format version {}.{} is not supported (1.0, 2.0, 3.0 are)", major,
                             static_cast<unsigned char>(bytes[7])));
  size_t prefix = 8 + length_bytes;
  if (bytes.size() < prefix)
    fail(origin, "the file ends inside the header");
  uint64_t header_len = read_le(bytes.data() + 8, length_bytes);
  if (header_len > bytes.size() - prefix)
    fail(origin, fmt::format("the header claims {} bytes but the file has {} after the prefix",
                             header_len, bytes.size() - prefix));
  Header h = HeaderParser(bytes.substr(prefix, header_len), origin).parse();
  DType type = dtype_from_descr(*h.descr, origin);

  HostArray a;
  a.dtype = type;
  a.shape = *h.shape;
  if (a.shape.empty())
    a.shape = {1}; // a 0-d array holds one element
  if (a.shape.size() > 4)
    fail(origin, fmt::format("it has {} dimensions; GPUkit arrays have at most 4", a.shape.size()));
  uint64_t count = 1;
  for (int64_t e : a.shape)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(e), &count))
      fail(origin, "the shape's element count overflows");
  uint64_t data_bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(size_of(type)), &data_bytes))
    fail(origin, "the shape's size in bytes overflows");
  uint64_t have = bytes.size() - prefix - header_len;
  if (have != data_bytes)
    fail(origin, fmt::format("the header describes {} elements of {} ({} bytes) but the file holds "
                             "{} bytes of data",
                             count, short_name(type), data_bytes, have));
  const char* data = bytes.data() + prefix + header_len;
  a.data.resize(data_bytes);
  if (data_bytes)
    std::memcpy(a.data.data(), data, data_bytes);
  if (type == DType::Bool)
    for (std::byte& b : a.data)
      if (b != std::byte{0} && b != std::byte{1})
        fail(origin, "a bool element is neither 0 nor 1");
  if (*h.fortran_order && a.shape.size() > 1)
    a.data = fortran_to_c(a.data, a.shape, size_of(type));
  return a;
}

HostArray read_npy(const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    throw Error(ErrorKind::Io, fmt::format("cannot read {}: {}", path, buffer.getError().message()));
  return parse_npy(std::string_view((*buffer)->getBufferStart(), (*buffer)->getBufferSize()), path);
}

std::string to_npy(const HostArray& a) {
  std::string shape = "(";
  for (size_t k = 0; k < a.shape.size(); ++k)
    shape += fmt::format("{}, ", a.shape[k]);
  if (a.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (a.shape.size() == 1)
    shape.resize(shape.size() - 1); // "(5,)"
  shape += ")";
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npy_descr(a.dtype), shape);
  // The header is padded with spaces to a multiple of 64 bytes, newline-terminated.
  size_t total = kMagicSize + 2 + 2 + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  return out;
}

void write_npy(const std::string& path, const HostArray& a) {
  std::string bytes = to_npy(a);
  llvm::SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temp))
    throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", path, ec.message()));
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(bytes.data(), bytes.size());
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", path, message));
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    throw Error(ErrorKind::Io, fmt::format("cannot write {}: {}", path, ec.message()));
  }
}

} // namespace gpukit::text
