// gpukit kernel ew_5c3fa0e8 — out = 2 * x + sin(y)  (examples/saxpy.cpp:18)

// N consecutive elements, loaded and stored as one aligned vector access.
template <typename T, int N> struct __align__(sizeof(T) * N) gk_pack { T v[N]; };

extern "C" __global__ void __launch_bounds__(128)
ew_5c3fa0e8(const float* __restrict__ x, const float* __restrict__ y,
            float* __restrict__ out, float s0, unsigned n) {
  const unsigned n_packs = n / 4;
  for (unsigned p0 = blockIdx.x * (blockDim.x * 4) + threadIdx.x; p0 < n_packs;
       p0 += gridDim.x * (blockDim.x * 4)) {
    gk_pack<float, 4> x_p[4];
    gk_pack<float, 4> y_p[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned p = p0 + j * blockDim.x;
      if (p < n_packs) {
        x_p[j] = reinterpret_cast<const gk_pack<float, 4>*>(x)[p];
        y_p[j] = reinterpret_cast<const gk_pack<float, 4>*>(y)[p];
      }
    }
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned p = p0 + j * blockDim.x;
      if (p < n_packs) {
        gk_pack<float, 4> out_p;
        #pragma unroll
        for (int k = 0; k < 4; ++k) {
          const float t0 = sinf(y_p[j].v[k]);
          out_p.v[k] = s0 * x_p[j].v[k] + t0;
        }
        reinterpret_cast<gk_pack<float, 4>*>(out)[p] = out_p;
      }
    }
  }
  // The last n % 4 elements.
  for (unsigned i = n_packs * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float t0 = sinf(y[i]);
    out[i] = s0 * x[i] + t0;
  }
}
