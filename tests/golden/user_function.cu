// gpukit kernel ew_10729ade — out = sqr(x) + s0 * sqr(y)

// Fixed-width integer names for the device functions below (NVRTC has no <cstdint>).
typedef unsigned char uint8_t;
typedef int int32_t;
typedef long long int64_t;

__device__ __forceinline__ float gk_fn_sqr(float v) { return v * v; }

extern "C" __global__ void __launch_bounds__(256)
ew_10729ade(const float* __restrict__ x, const float* __restrict__ y,
            float* __restrict__ out, float s0, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float t0 = gk_fn_sqr(x[i]);
    const float t1 = gk_fn_sqr(y[i]);
    out[i] = t0 + s0 * t1;
  }
}
