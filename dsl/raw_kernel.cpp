#include "dsl/raw_kernel.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

namespace gpukit {

RawKernel::RawKernel(std::string source, std::string name, std::vector<std::string> options)
    : Source(std::move(source)), Name(std::move(name)), Options(std::move(options)) {
  if (Name.empty())
    throw Error(ErrorKind::Usage, "RawKernel: the kernel name is empty; pass the name of the "
                                  "extern \"C\" __global__ function in the source");
}

const rt::Kernel& RawKernel::compile() {
  std::call_once(Compiled, [&] {
    Kernel = &rt::Runtime::get().kernels().get({Name, Source, Options});
  });
  return *Kernel;
}

void RawKernel::launch_packed(rt::LaunchShape shape, void** args) {
  rt::Runtime& runtime = rt::Runtime::get();
  if (!runtime.on_gpu())
    throw Error(ErrorKind::Unavailable,
                fmt::format("raw CUDA kernels need a GPU: {}", runtime.fallback_reason()));
  runtime.launch(compile(), shape, args);
}

} // namespace gpukit
