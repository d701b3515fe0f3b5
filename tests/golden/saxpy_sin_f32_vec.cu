// gpukit kernel ew_1e92d75e — out = 2 * x + sin(y)  (examples/saxpy.cpp:18)

// N consecutive elements, loaded and stored as one aligned vector access.
template <typename T, int N> struct __align__(sizeof(T) * N) gk_pack { T v[N]; };

extern "C" __global__ void __launch_bounds__(256)
ew_1e92d75e(const float* __restrict__ x, const float* __restrict__ y,
            float* __restrict__ out, float s0, unsigned n) {
  const unsigned n_packs = n / 4;
  for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < n_packs; p += gridDim.x * blockDim.x) {
    const gk_pack<float, 4> x_p = reinterpret_cast<const gk_pack<float, 4>*>(x)[p];
    const gk_pack<float, 4> y_p = reinterpret_cast<const gk_pack<float, 4>*>(y)[p];
    gk_pack<float, 4> out_p;
    #pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float t0 = sinf(y_p.v[k]);
      out_p.v[k] = s0 * x_p.v[k] + t0;
    }
    reinterpret_cast<gk_pack<float, 4>*>(out)[p] = out_p;
  }
  // The last n % 4 elements.
  for (unsigned i = n_packs * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float t0 = sinf(y[i]);
    out[i] = s0 * x[i] + t0;
  }
}
