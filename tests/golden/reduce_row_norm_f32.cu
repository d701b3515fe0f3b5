// gpukit reduction kernel rd_9c1c7914_row — out = sqrt(sum(x * x, 1))  (dsl/reduce_codegen_test.cpp:59)

// N consecutive elements, loaded and stored as one aligned vector access.
template <typename T, int N> struct __align__(sizeof(T) * N) gk_pack { T v[N]; };


// Reduces v over the block; every thread returns the same value. Warps
// reduce with shuffles, then every thread combines the warps' values in
// warp order: the result does not depend on timing (deterministic).
template <typename T, typename F>
__device__ __forceinline__ T gk_block_reduce(T v, F f, T* smem) {
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = f(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads(); // smem may still be read by the previous reduction
  if ((threadIdx.x & 31) == 0)
    smem[threadIdx.x >> 5] = v;
  __syncthreads();
  v = smem[0];
  for (int k = 1; k < (int)(blockDim.x >> 5); ++k)
    v = f(v, smem[k]);
  return v;
}
struct gk_op_0 {
  __device__ float operator()(float a, float b) const { return a + b; }
};

extern "C" __global__ void __launch_bounds__(32)
rd_9c1c7914_row(const float* __restrict__ x,
                float* __restrict__ gk_dst,
                long long outer,
                long long extent,
                long long inner) {
  // One block per row of 256 elements (64 packs of 4); each thread keeps its 2 pack(s) in registers.
  const long long gk_row = blockIdx.x;
  gk_pack<float, 4> x_r[2];
  #pragma unroll
  for (int gk_j = 0; gk_j < 2; ++gk_j) {
    const int gk_p = threadIdx.x + gk_j * 32;
    if (gk_p < 64) {
      x_r[gk_j] = reinterpret_cast<const gk_pack<float, 4>*>((x + gk_row * 256LL))[gk_p];
    }
  }
  // r0 = sum over the row
  __shared__ float gk_smem0[32];
  const float r0 = [&] {
    float gk_acc = 0;
    #pragma unroll
    for (int gk_j = 0; gk_j < 2; ++gk_j) {
      const int gk_p = threadIdx.x + gk_j * 32;
      if (gk_p < 64) {
        #pragma unroll
        for (int gk_k = 0; gk_k < 4; ++gk_k) {
          {
            float gk_v;
            gk_v = x_r[gk_j].v[gk_k] * x_r[gk_j].v[gk_k];
            gk_acc = gk_op_0()(gk_acc, gk_v);
          }
        }
      }
    }
    gk_acc = gk_block_reduce(gk_acc, gk_op_0(), gk_smem0);
    return gk_acc;
  }();
  if (threadIdx.x == 0) {
    // The epilogue, once per row
    float gk_out;
    {
      const float t0 = sqrtf(r0);
      gk_out = t0;
    }
    gk_dst[gk_row] = gk_out;
  }
}

