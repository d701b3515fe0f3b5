// gpukit reduction kernel rd_179a55a4_p0 — out = max(x, 0) - min(x, 0)  (dsl/reduce_codegen_test.cpp:61)

// N consecutive elements, loaded and stored as one aligned vector access.
template <typename T, int N> struct __align__(sizeof(T) * N) gk_pack { T v[N]; };


struct gk_op_0 {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

extern "C" __global__ void __launch_bounds__(256)
rd_179a55a4_p0(const float* __restrict__ x,
               float* __restrict__ gk_partials,
               long long outer,
               long long extent,
               long long inner) {
  float gk_acc = __int_as_float(0xff800000);
  // A 1-D grid of column blocks x outer slices x row slices; a block is 32 lanes x 8 row groups.
  const bool gk_vec = inner % 4 == 0;
  const int gk_w = gk_vec ? 4 : 1; // columns per lane
  const long long gk_threads = inner / gk_w;
  const long long gk_xblocks = (gk_threads + 31) / 32;
  const int gk_lane = threadIdx.x & 31, gk_g = threadIdx.x >> 5;
  const long long gk_t = (blockIdx.x % gk_xblocks) * 32 + gk_lane;
  const long long gk_o = (blockIdx.x / gk_xblocks) % outer;
  const long long gk_z = blockIdx.x / (gk_xblocks * outer);
  const long long gk_splits = gridDim.x / (gk_xblocks * outer);
  const long long gk_rows = (extent + gk_splits - 1) / gk_splits;
  const long long gk_begin = gk_z * gk_rows;
  const long long gk_end = gk_begin + gk_rows < extent ? gk_begin + gk_rows : extent;
  const long long gk_col = gk_t * gk_w;
  // Lanes past the last column still reach the barrier below.
  const bool gk_live = gk_t < gk_threads;
  __shared__ float gk_part[8][32];
  float gk_accv[4];
  #pragma unroll
  for (int gk_k = 0; gk_k < 4; ++gk_k)
    gk_accv[gk_k] = gk_acc;
  if (gk_vec) {
    long long gk_e = gk_begin + gk_g;
    if (gk_live) {
      for (; gk_e + 24 < gk_end; gk_e += 32) {
        // All 4 loads are issued before the first combine.
        gk_pack<float, 4> x_p[4];
        #pragma unroll
        for (int gk_j = 0; gk_j < 4; ++gk_j) {
          x_p[gk_j] = *reinterpret_cast<const gk_pack<float, 4>*>(x + (gk_o * extent + gk_e + gk_j * 8) * inner + gk_col);
        }
        #pragma unroll
        for (int gk_j = 0; gk_j < 4; ++gk_j) {
          #pragma unroll
          for (int gk_k = 0; gk_k < 4; ++gk_k) {
            float& gk_acc = gk_accv[gk_k];
            {
              float gk_v;
              gk_v = x_p[gk_j].v[gk_k];
              gk_acc = gk_op_0()(gk_acc, gk_v);
            }
          }
        }
      }
      for (; gk_e < gk_end; gk_e += 8) {
        const gk_pack<float, 4> x_q = *reinterpret_cast<const gk_pack<float, 4>*>(x + (gk_o * extent + gk_e) * inner + gk_col);
        #pragma unroll
        for (int gk_k = 0; gk_k < 4; ++gk_k) {
          float& gk_acc = gk_accv[gk_k];
          {
            float gk_v;
            gk_v = x_q.v[gk_k];
            gk_acc = gk_op_0()(gk_acc, gk_v);
          }
        }
      }
    }
  } else {
    // One column per lane, scalar loads.
    float& gk_acc = gk_accv[0];
    #pragma unroll 4
    for (long long gk_e = gk_begin + gk_g; gk_live && gk_e < gk_end; gk_e += 8) {
      const long long gk_i = (gk_o * extent + gk_e) * inner + gk_col;
      {
        float gk_v;
        gk_v = x[gk_i];
        gk_acc = gk_op_0()(gk_acc, gk_v);
      }
    }
  }
  // The row groups in order, one column of the pack at a time.
  #pragma unroll
  for (int gk_k = 0; gk_k < 4; ++gk_k) {
    if (gk_k >= gk_w)
      break;
    gk_part[gk_g][gk_lane] = gk_accv[gk_k];
    __syncthreads();
    if (gk_g == 0 && gk_live) {
      float gk_v = gk_part[0][gk_lane];
      #pragma unroll
      for (int gk_j = 1; gk_j < 8; ++gk_j)
        gk_v = gk_op_0()(gk_v, gk_part[gk_j][gk_lane]);
      gk_partials[(gk_z * outer + gk_o) * inner + gk_col + gk_k] = gk_v;
    }
    __syncthreads();
  }
}

