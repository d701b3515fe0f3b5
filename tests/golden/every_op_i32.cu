// gpukit kernel ew_628d6e9b — every operation on i32

// Rounds to nearest even; overflows to infinity.
__device__ __forceinline__ unsigned short gk_f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

// Rounds to nearest even (cvt.rn.bf16.f32 needs sm_80).
__device__ __forceinline__ unsigned short gk_f32_to_bf16(float f) {
  unsigned short b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}

// x / 0 == 0 and INT_MIN / -1 == INT_MIN (wraps); a plain `/` is undefined for both.
__device__ __forceinline__ int gk_div_i32(int a, int b) {
  return b == 0 ? 0 : b == -1 ? (int)(0u - (unsigned)a) : a / b;
}

// x % 0 == 0 and x % -1 == 0 (INT_MIN % -1 is undefined in C++).
__device__ __forceinline__ int gk_mod_i32(int a, int b) {
  return b == 0 || b == -1 ? 0 : a % b;
}

extern "C" __global__ void __launch_bounds__(256)
ew_628d6e9b(const int* __restrict__ a,
            const int* __restrict__ b,
            const int* __restrict__ c,
            const unsigned char* __restrict__ m,  // bool
            int* __restrict__ r_neg,
            int* __restrict__ r_abs,
            int* __restrict__ r_floor,
            int* __restrict__ r_ceil,
            int* __restrict__ r_round,
            float* __restrict__ r_sqrt,
            float* __restrict__ r_rsqrt,
            float* __restrict__ r_exp,
            float* __restrict__ r_exp2,
            float* __restrict__ r_log,
            float* __restrict__ r_log2,
            float* __restrict__ r_log10,
            float* __restrict__ r_sin,
            float* __restrict__ r_cos,
            float* __restrict__ r_tan,
            float* __restrict__ r_tanh,
            float* __restrict__ r_sigmoid,
            float* __restrict__ r_erf,
            int* __restrict__ r_add,
            int* __restrict__ r_sub,
            int* __restrict__ r_mul,
            int* __restrict__ r_div,
            int* __restrict__ r_mod,
            int* __restrict__ r_min,
            int* __restrict__ r_max,
            float* __restrict__ r_pow,
            int* __restrict__ r_fma,
            int* __restrict__ r_clamp,
            int* __restrict__ r_where,
            unsigned char* __restrict__ r_lt,  // bool
            unsigned char* __restrict__ r_le,  // bool
            unsigned char* __restrict__ r_gt,  // bool
            unsigned char* __restrict__ r_ge,  // bool
            unsigned char* __restrict__ r_eq,  // bool
            unsigned char* __restrict__ r_ne,  // bool
            unsigned char* __restrict__ r_and,  // bool
            unsigned char* __restrict__ r_or,  // bool
            unsigned char* __restrict__ r_not,  // bool
            unsigned char* __restrict__ to_bool,  // bool
            unsigned char* __restrict__ to_u8,
            int* __restrict__ to_i32,
            long long* __restrict__ to_i64,
            unsigned short* __restrict__ to_f16,  // f16
            unsigned short* __restrict__ to_bf16,  // bf16
            float* __restrict__ to_f32,
            double* __restrict__ to_f64,
            unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int a_v = a[i];
    const int b_v = b[i];
    const int c_v = c[i];
    const unsigned char m_v = m[i];
    const int t0 = abs(a_v);
    const float t1 = (float)a_v;
    const float t2 = sqrtf(t1);
    const float t3 = rsqrtf(t1);
    const float t4 = expf(t1);
    const float t5 = exp2f(t1);
    const float t6 = logf(t1);
    const float t7 = log2f(t1);
    const float t8 = log10f(t1);
    const float t9 = sinf(t1);
    const float t10 = cosf(t1);
    const float t11 = tanf(t1);
    const float t12 = tanhf(t1);
    const float t13 = 1.0f / (1.0f + expf(-t1));
    const float t14 = erff(t1);
    const int t15 = gk_div_i32(a_v, b_v);
    const int t16 = gk_mod_i32(a_v, b_v);
    const int t17 = min(a_v, b_v);
    const int t18 = max(a_v, b_v);
    const float t19 = powf(t1, (float)b_v);
    const int t20 = min(max(a_v, b_v), c_v);
    const bool t21 = a_v != 0;
    const bool t22 = b_v != 0;
    r_neg[i] = -a_v;
    r_abs[i] = t0;
    r_floor[i] = a_v;
    r_ceil[i] = a_v;
    r_round[i] = a_v;
    r_sqrt[i] = t2;
    r_rsqrt[i] = t3;
    r_exp[i] = t4;
    r_exp2[i] = t5;
    r_log[i] = t6;
    r_log2[i] = t7;
    r_log10[i] = t8;
    r_sin[i] = t9;
    r_cos[i] = t10;
    r_tan[i] = t11;
    r_tanh[i] = t12;
    r_sigmoid[i] = t13;
    r_erf[i] = t14;
    r_add[i] = a_v + b_v;
    r_sub[i] = a_v - b_v;
    r_mul[i] = a_v * b_v;
    r_div[i] = t15;
    r_mod[i] = t16;
    r_min[i] = t17;
    r_max[i] = t18;
    r_pow[i] = t19;
    r_fma[i] = a_v * b_v + c_v;
    r_clamp[i] = t20;
    r_where[i] = (m_v != 0) ? a_v : b_v;
    r_lt[i] = a_v < b_v;
    r_le[i] = a_v <= b_v;
    r_gt[i] = a_v > b_v;
    r_ge[i] = a_v >= b_v;
    r_eq[i] = a_v == b_v;
    r_ne[i] = a_v != b_v;
    r_and[i] = t21 && t22;
    r_or[i] = t21 || t22;
    r_not[i] = !t21;
    to_bool[i] = t21;
    to_u8[i] = (unsigned char)a_v;
    to_i32[i] = a_v;
    to_i64[i] = (long long)a_v;
    to_f16[i] = gk_f32_to_f16((float)a_v);
    to_bf16[i] = gk_f32_to_bf16((float)a_v);
    to_f32[i] = t1;
    to_f64[i] = (double)a_v;
  }
}
