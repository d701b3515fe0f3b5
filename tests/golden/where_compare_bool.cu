// gpukit kernel ew_6b1365e5 — hit = x < y && mask; pick = where(x < y, x, y * 2)

// N consecutive elements, loaded and stored as one aligned vector access.
template <typename T, int N> struct __align__(sizeof(T) * N) gk_pack { T v[N]; };

extern "C" __global__ void __launch_bounds__(256)
ew_6b1365e5(const float* __restrict__ x,
            const float* __restrict__ y,
            const unsigned char* __restrict__ mask,  // bool
            unsigned char* __restrict__ hit,  // bool
            float* __restrict__ pick,
            unsigned n) {
  const unsigned n_packs = n / 4;
  for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < n_packs; p += gridDim.x * blockDim.x) {
    const gk_pack<float, 4> x_p = reinterpret_cast<const gk_pack<float, 4>*>(x)[p];
    const gk_pack<float, 4> y_p = reinterpret_cast<const gk_pack<float, 4>*>(y)[p];
    const gk_pack<unsigned char, 4> mask_p = reinterpret_cast<const gk_pack<unsigned char, 4>*>(mask)[p];
    gk_pack<unsigned char, 4> hit_p;
    gk_pack<float, 4> pick_p;
    #pragma unroll
    for (int k = 0; k < 4; ++k) {
      const bool t0 = x_p.v[k] < y_p.v[k];
      hit_p.v[k] = t0 && (mask_p.v[k] != 0);
      pick_p.v[k] = t0 ? x_p.v[k] : y_p.v[k] * 2.0f;
    }
    reinterpret_cast<gk_pack<unsigned char, 4>*>(hit)[p] = hit_p;
    reinterpret_cast<gk_pack<float, 4>*>(pick)[p] = pick_p;
  }
  // The last n % 4 elements.
  for (unsigned i = n_packs * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float x_v = x[i];
    const float y_v = y[i];
    const unsigned char mask_v = mask[i];
    const bool t0 = x_v < y_v;
    hit[i] = t0 && (mask_v != 0);
    pick[i] = t0 ? x_v : y_v * 2.0f;
  }
}
