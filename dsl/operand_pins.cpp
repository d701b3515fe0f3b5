#include "dsl/operand_pins.hpp"

#include <algorithm>

namespace gpukit::detail {

OperandPins::OperandPins() : Stream(Buffer::use_stream()) {}

void OperandPins::add(const ArrayBase& array) {
  Buffer* buffer = array.buffer();
  if (!buffer || buffer->bytes() == 0)
    return;
  if (std::find(Buffers.begin(), Buffers.end(), buffer) != Buffers.end())
    return;
  Pins.push_back(buffer->pin(Stream));
  Buffers.push_back(buffer);
}

} // namespace gpukit::detail
