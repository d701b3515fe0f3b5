// gpukit kernel ew_021b66f6 — out = x + b  (tests/codegen/cuda_strided_emitter_test.cpp) (strided r2 in:SU,BU out:SU)
extern "C" __global__ void __launch_bounds__(256)
ew_021b66f6(const float* __restrict__ x, const float* __restrict__ b,
            float* __restrict__ out, unsigned n,
            int gk_e1, int gk_x_s0, int gk_out_s0) {
  // Output element i is at indices gk_i0..gk_i1 (row-major; axis a > 0
  // has extent gk_ea). The first index and the grid stride are split into
  // per-axis digits once, so the loop never divides.
  const unsigned gk_start = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned gk_step = gridDim.x * blockDim.x;
  unsigned gk_iq = gk_start;
  int gk_i1 = gk_iq % gk_e1;
  gk_iq /= gk_e1;
  int gk_i0 = gk_iq;
  unsigned gk_dq = gk_step;
  const int gk_d1 = gk_dq % gk_e1;
  gk_dq /= gk_e1;
  const int gk_d0 = gk_dq;
  for (unsigned i = gk_start; i < n; i += gk_step) {
    out[gk_i0 * gk_out_s0 + gk_i1] = x[gk_i0 * gk_x_s0 + gk_i1] + b[gk_i1];
    // Advance by gk_step: add its digits, carrying into the axis before.
    gk_i1 += gk_d1;
    if (gk_i1 >= gk_e1) {
      gk_i1 -= gk_e1;
      ++gk_i0;
    }
    gk_i0 += gk_d0;
  }
}
