# Third-party dependencies. Each one is in the README's dependency table.

# fmt, header-only so the binaries carry no libfmt.so dependency.
find_package(fmt 9 REQUIRED)

# LLVM libSupport, linked statically (cl::opt, raw_ostream, xxHash64, sys::fs,
# json). Only the two archives are used, never the shared libLLVM.
set(GPUKIT_LLVM_ROOT "" CACHE PATH "LLVM installation prefix (holds include/ and lib/libLLVMSupport.a)")
if(NOT GPUKIT_LLVM_ROOT)
  foreach(v 19 18 17 16 15 14)
    if(EXISTS "/usr/lib/llvm-${v}/lib/libLLVMSupport.a")
      set(GPUKIT_LLVM_ROOT "/usr/lib/llvm-${v}")
      break()
    endif()
  endforeach()
endif()
find_library(LLVM_SUPPORT_LIB NAMES libLLVMSupport.a PATHS "${GPUKIT_LLVM_ROOT}/lib" NO_DEFAULT_PATH REQUIRED)
find_library(LLVM_DEMANGLE_LIB NAMES libLLVMDemangle.a PATHS "${GPUKIT_LLVM_ROOT}/lib" NO_DEFAULT_PATH REQUIRED)
find_library(TINFO_LIB NAMES tinfo ncursesw REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
add_library(gpukit_llvm_support INTERFACE)
target_include_directories(gpukit_llvm_support SYSTEM INTERFACE "${GPUKIT_LLVM_ROOT}/include")
target_link_libraries(gpukit_llvm_support INTERFACE
  ${LLVM_SUPPORT_LIB} ${LLVM_DEMANGLE_LIB} ${TINFO_LIB} ZLIB::ZLIB ${CMAKE_DL_LIBS} Threads::Threads)
target_compile_definitions(gpukit_llvm_support INTERFACE _GNU_SOURCE __STDC_CONSTANT_MACROS __STDC_LIMIT_MACROS)

# Boost headers only (Spirit X3 for the text front end).
find_package(Boost 1.74 REQUIRED)

# CUDA toolkit *headers* only: cuda.h and nvrtc.h give the prototypes whose
# addresses runtime/ resolves with dlsym. Nothing is linked.
set(GPUKIT_CUDA_ROOT "$ENV{CUDA_PATH}" CACHE PATH "CUDA toolkit root (for cuda.h and nvrtc.h)")
find_path(GPUKIT_CUDA_INCLUDE_DIR cuda.h nvrtc.h
  HINTS "${GPUKIT_CUDA_ROOT}/include" /usr/local/cuda/include /usr/include REQUIRED)
add_library(gpukit_cuda_headers INTERFACE)
target_include_directories(gpukit_cuda_headers SYSTEM INTERFACE "${GPUKIT_CUDA_INCLUDE_DIR}")

if(GPUKIT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
