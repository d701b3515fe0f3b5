// gpukit reduction kernel rd_7d93404b_row — out = (x - mean(x, 1)) * rsqrt(var(x, 1) + 1e-05) * g + b  (dsl/reduce_codegen_test.cpp:39)

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
struct gk_op_1 {
  __device__ float operator()(float a, float b) const { return a + b; }
};

extern "C" __global__ void __launch_bounds__(512)
rd_7d93404b_row(const float* __restrict__ x,
                const float* __restrict__ g,
                const float* __restrict__ b,
                float s2,
                float* __restrict__ gk_dst,
                long long outer,
                long long extent,
                long long inner) {
  // One block per row of 4096 elements (1024 packs of 4); each thread keeps its 2 pack(s) in registers.
  const long long gk_row = blockIdx.x;
  gk_pack<float, 4> x_r[2];
  gk_pack<float, 4> g_r[2];
  gk_pack<float, 4> b_r[2];
  #pragma unroll
  for (int gk_j = 0; gk_j < 2; ++gk_j) {
    const int gk_p = threadIdx.x + gk_j * 512;
    if (gk_p < 1024) {
      x_r[gk_j] = reinterpret_cast<const gk_pack<float, 4>*>((x + gk_row * 4096LL))[gk_p];
      g_r[gk_j] = reinterpret_cast<const gk_pack<float, 4>*>(g)[gk_p];
      b_r[gk_j] = reinterpret_cast<const gk_pack<float, 4>*>(b)[gk_p];
    }
  }
  // r0 = mean over the row
  __shared__ float gk_smem0[32];
  const float r0 = [&] {
    float gk_acc = 0;
    #pragma unroll
    for (int gk_j = 0; gk_j < 2; ++gk_j) {
      const int gk_p = threadIdx.x + gk_j * 512;
      if (gk_p < 1024) {
        #pragma unroll
        for (int gk_k = 0; gk_k < 4; ++gk_k) {
          {
            float gk_v;
            gk_v = x_r[gk_j].v[gk_k];
            gk_acc = gk_op_0()(gk_acc, gk_v);
          }
        }
      }
    }
    gk_acc = gk_block_reduce(gk_acc, gk_op_0(), gk_smem0);
    return gk_acc / (float)4096;
  }();
  // r1 = mean over the row
  __shared__ float gk_smem1[32];
  const float r1 = [&] {
    float gk_acc = 0;
    #pragma unroll
    for (int gk_j = 0; gk_j < 2; ++gk_j) {
      const int gk_p = threadIdx.x + gk_j * 512;
      if (gk_p < 1024) {
        #pragma unroll
        for (int gk_k = 0; gk_k < 4; ++gk_k) {
          {
            float gk_v;
            const float t0 = x_r[gk_j].v[gk_k] - r0;
            gk_v = t0 * t0;
            gk_acc = gk_op_1()(gk_acc, gk_v);
          }
        }
      }
    }
    gk_acc = gk_block_reduce(gk_acc, gk_op_1(), gk_smem1);
    return gk_acc / (float)4096;
  }();
  // The row's elements, from the values above
  #pragma unroll
  for (int gk_j = 0; gk_j < 2; ++gk_j) {
    const int gk_p = threadIdx.x + gk_j * 512;
    if (gk_p < 1024) {
      gk_pack<float, 4> gk_out;
      #pragma unroll
      for (int gk_k = 0; gk_k < 4; ++gk_k) {
        {
          const float t0 = rsqrtf(r1 + s2);
          gk_out.v[gk_k] = (x_r[gk_j].v[gk_k] - r0) * t0 * g_r[gk_j].v[gk_k] + b_r[gk_j].v[gk_k];
        }
      }
      reinterpret_cast<gk_pack<float, 4>*>(gk_dst + gk_row * 4096LL)[gk_p] = gk_out;
    }
  }
}

