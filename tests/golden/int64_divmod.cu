// gpukit kernel ew_ac2fb4c7 — q = a / b; r = a % c; m = -a % 7

// x / 0 == 0 and INT64_MIN / -1 == INT64_MIN (wraps); a plain `/` is undefined for both.
__device__ __forceinline__ long long gk_div_i64(long long a, long long b) {
  return b == 0 ? 0 : b == -1 ? (long long)(0ull - (unsigned long long)a) : a / b;
}

// x % 0 == 0 and x % -1 == 0 (INT64_MIN % -1 is undefined in C++).
__device__ __forceinline__ long long gk_mod_i64(long long a, long long b) {
  return b == 0 || b == -1 ? 0 : a % b;
}

extern "C" __global__ void __launch_bounds__(256)
ew_ac2fb4c7(const long long* __restrict__ a, const long long* __restrict__ b,
            const int* __restrict__ c,
            long long* __restrict__ q, long long* __restrict__ r, long long* __restrict__ m,
            unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const long long a_v = a[i];
    const long long b_v = b[i];
    const int c_v = c[i];
    const long long t0 = gk_div_i64(a_v, b_v);
    const long long t1 = gk_mod_i64(a_v, (long long)c_v);
    const long long t2 = gk_mod_i64(-a_v, 7LL);
    q[i] = t0;
    r[i] = t1;
    m[i] = t2;
  }
}
