// NumPy .npy files: reading and writing HostArrays, for `gpukit run --input`
// and `--save`.
//
//   HostArray x = read_npy("x.npy");        // Error{Io} with the reason if malformed
//   write_npy("out.npy", out);              // atomically (temporary file + rename)
//
// Versions 1.0, 2.0 and 3.0 are read; 1.0 is written. Element types map to
// descr strings: bool '|b1', u8 '|u1', i32 '<i4', i64 '<i8', f16 '<f2',
// f32 '<f4', f64 '<f8', and bf16 '<V2' (what np.save writes for
// ml_dtypes.bfloat16: load it with np.load(f).view(ml_dtypes.bfloat16)).
// Fortran-order arrays are transposed to C order when read. Big-endian data,
// other types, object arrays and files whose size disagrees with their header
// are rejected with a message that says which.
#pragma once

#include "dsl/text/host_array.hpp"

#include <string>
#include <string_view>

namespace gpukit::text {

/// Parses the bytes of a .npy file; `origin` names it in messages.
HostArray parse_npy(std::string_view bytes, std::string_view origin);
HostArray read_npy(const std::string& path);

/// The bytes of a version 1.0 .npy file holding `a` in C order.
std::string to_npy(const HostArray& a);
void write_npy(const std::string& path, const HostArray& a);

/// The descr string `t` is written with ("<f4").
std::string_view npy_descr(DType t);

} // namespace gpukit::text
