// gpukit kernel ew_ae32cd37 — out = 2 * x + sin(y)  (examples/saxpy.cpp:18)
extern "C" __global__ void __launch_bounds__(256)
ew_ae32cd37(const double* __restrict__ x, const double* __restrict__ y,
            double* __restrict__ out, double s0, unsigned n) {
  for (unsigned i0 = blockIdx.x * (blockDim.x * 2) + threadIdx.x; i0 < n;
       i0 += gridDim.x * (blockDim.x * 2)) {
    double x_v[2];
    double y_v[2];
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const unsigned i = i0 + j * blockDim.x;
      if (i < n) {
        x_v[j] = x[i];
        y_v[j] = y[i];
      }
    }
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const unsigned i = i0 + j * blockDim.x;
      if (i < n) {
        const double t0 = sin(y_v[j]);
        out[i] = s0 * x_v[j] + t0;
      }
    }
  }
}
