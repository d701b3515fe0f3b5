// OperandPins: keeps every array a launch or copy uses resident in device
// memory (the pool may otherwise spill it, see dsl/buffer.hpp) from before
// its addresses are read until the work is enqueued.
//
//   OperandPins pins;                          // the calling thread's launch stream
//   for (const ArrayBase* a : operands) pins.add(*a);
//   launch(..., a.address(), ...);             // addresses read after every add()
//
// Pin ALL operands before reading ANY address: pinning one may restore it
// and spill another that is not pinned yet. Cheap on the hot path: no heap
// allocation up to 8 distinct buffers; a buffer seen twice is pinned once.
#pragma once

#include "dsl/array_base.hpp"
#include "runtime/spillable_handle.hpp"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

namespace gpukit::detail {

class OperandPins {
public:
  /// Pins for the calling thread's launch stream (Buffer::use_stream()).
  OperandPins();
  explicit OperandPins(CUstream stream) : Stream(stream) {}
  OperandPins(const OperandPins&) = delete;
  OperandPins& operator=(const OperandPins&) = delete;

  /// Pins `array`'s buffer (nothing for an empty or moved-from array).
  void add(const ArrayBase& array);
  void add(llvm::ArrayRef<const ArrayBase*> arrays) {
    for (const ArrayBase* a : arrays)
      add(*a);
  }
  void add(llvm::ArrayRef<ArrayBase*> arrays) {
    for (const ArrayBase* a : arrays)
      add(*a);
  }
  size_t size() const { return Pins.size(); }

private:
  CUstream Stream = nullptr;
  llvm::SmallVector<const Buffer*, 8> Buffers;
  llvm::SmallVector<rt::SpillableHandle::Pin, 8> Pins;
};

} // namespace gpukit::detail
