// gpukit reduction kernel rd_179a55a4_f1 — out = max(x, 0) - min(x, 0)  (dsl/reduce_codegen_test.cpp:61)

struct gk_op_1 {
  __device__ float operator()(float a, float b) const { return fminf(a, b); }
};

extern "C" __global__ void __launch_bounds__(256)
rd_179a55a4_f1(const float* __restrict__ gk_r0,
               float* __restrict__ gk_partials,
               float* __restrict__ gk_dst,
               long long groups,
               long long parts,
               long long count) {
  const long long gk_g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (gk_g >= groups)
    return;
  float gk_acc = gk_partials[gk_g];
  // Slices in order; unrolled so that several loads are in flight.
  #pragma unroll 8
  for (long long gk_s = 1; gk_s < parts; ++gk_s)
    gk_acc = gk_op_1()(gk_acc, gk_partials[gk_s * groups + gk_g]);
  // The epilogue, once per result
  const float r1 = gk_acc;
  const float r0 = gk_r0[gk_g];
  float gk_out;
  {
    gk_out = r0 - r1;
  }
  gk_dst[gk_g] = gk_out;
}

