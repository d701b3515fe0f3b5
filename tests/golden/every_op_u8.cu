// gpukit kernel ew_c51acccf — every operation on u8

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

// x / 0 == 0.
__device__ __forceinline__ unsigned char gk_div_u8(unsigned char a, unsigned char b) {
  return b == 0 ? 0 : a / b;
}

// x % 0 == 0.
__device__ __forceinline__ unsigned char gk_mod_u8(unsigned char a, unsigned char b) {
  return b == 0 ? 0 : a % b;
}

extern "C" __global__ void __launch_bounds__(256)
ew_c51acccf(const unsigned char* __restrict__ a,
            const unsigned char* __restrict__ b,
            const unsigned char* __restrict__ c,
            const unsigned char* __restrict__ m,  // bool
            unsigned char* __restrict__ r_neg,
            unsigned char* __restrict__ r_abs,
            unsigned char* __restrict__ r_floor,
            unsigned char* __restrict__ r_ceil,
            unsigned char* __restrict__ r_round,
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
            unsigned char* __restrict__ r_add,
            unsigned char* __restrict__ r_sub,
            unsigned char* __restrict__ r_mul,
            unsigned char* __restrict__ r_div,
            unsigned char* __restrict__ r_mod,
            unsigned char* __restrict__ r_min,
            unsigned char* __restrict__ r_max,
            float* __restrict__ r_pow,
            unsigned char* __restrict__ r_fma,
            unsigned char* __restrict__ r_clamp,
            unsigned char* __restrict__ r_where,
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
    const unsigned char a_v = a[i];
    const unsigned char b_v = b[i];
    const unsigned char c_v = c[i];
    const unsigned char m_v = m[i];
    const float t0 = (float)a_v;
    const float t1 = sqrtf(t0);
    const float t2 = rsqrtf(t0);
    const float t3 = expf(t0);
    const float t4 = exp2f(t0);
    const float t5 = logf(t0);
    const float t6 = log2f(t0);
    const float t7 = log10f(t0);
    const float t8 = sinf(t0);
    const float t9 = cosf(t0);
    const float t10 = tanf(t0);
    const float t11 = tanhf(t0);
    const float t12 = 1.0f / (1.0f + expf(-t0));
    const float t13 = erff(t0);
    const unsigned char t14 = gk_div_u8(a_v, b_v);
    const unsigned char t15 = gk_mod_u8(a_v, b_v);
    const unsigned char t16 = (unsigned char)min(a_v, b_v);
    const unsigned char t17 = (unsigned char)max(a_v, b_v);
    const float t18 = powf(t0, (float)b_v);
    const unsigned char t19 = (unsigned char)min(max(a_v, b_v), c_v);
    const bool t20 = a_v != 0;
    const bool t21 = b_v != 0;
    r_neg[i] = (unsigned char)(-a_v);
    r_abs[i] = a_v;
    r_floor[i] = a_v;
    r_ceil[i] = a_v;
    r_round[i] = a_v;
    r_sqrt[i] = t1;
    r_rsqrt[i] = t2;
    r_exp[i] = t3;
    r_exp2[i] = t4;
    r_log[i] = t5;
    r_log2[i] = t6;
    r_log10[i] = t7;
    r_sin[i] = t8;
    r_cos[i] = t9;
    r_tan[i] = t10;
    r_tanh[i] = t11;
    r_sigmoid[i] = t12;
    r_erf[i] = t13;
    r_add[i] = (unsigned char)(a_v + b_v);
    r_sub[i] = (unsigned char)(a_v - b_v);
    r_mul[i] = (unsigned char)(a_v * b_v);
    r_div[i] = t14;
    r_mod[i] = t15;
    r_min[i] = t16;
    r_max[i] = t17;
    r_pow[i] = t18;
    r_fma[i] = (unsigned char)(a_v * b_v + c_v);
    r_clamp[i] = t19;
    r_where[i] = (m_v != 0) ? a_v : b_v;
    r_lt[i] = a_v < b_v;
    r_le[i] = a_v <= b_v;
    r_gt[i] = a_v > b_v;
    r_ge[i] = a_v >= b_v;
    r_eq[i] = a_v == b_v;
    r_ne[i] = a_v != b_v;
    r_and[i] = t20 && t21;
    r_or[i] = t20 || t21;
    r_not[i] = !t20;
    to_bool[i] = t20;
    to_u8[i] = a_v;
    to_i32[i] = (int)a_v;
    to_i64[i] = (long long)a_v;
    to_f16[i] = gk_f32_to_f16((float)a_v);
    to_bf16[i] = gk_f32_to_bf16((float)a_v);
    to_f32[i] = t0;
    to_f64[i] = (double)a_v;
  }
}
