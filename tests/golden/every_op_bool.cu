// gpukit kernel ew_3f115399 — every operation on bool

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

extern "C" __global__ void __launch_bounds__(256)
ew_3f115399(const unsigned char* __restrict__ a,  // bool
            const unsigned char* __restrict__ b,  // bool
            const unsigned char* __restrict__ c,  // bool
            const unsigned char* __restrict__ m,  // bool
            unsigned char* __restrict__ r_neg,  // bool
            unsigned char* __restrict__ r_abs,  // bool
            unsigned char* __restrict__ r_floor,  // bool
            unsigned char* __restrict__ r_ceil,  // bool
            unsigned char* __restrict__ r_round,  // bool
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
            unsigned char* __restrict__ r_add,  // bool
            unsigned char* __restrict__ r_sub,  // bool
            unsigned char* __restrict__ r_mul,  // bool
            unsigned char* __restrict__ r_div,  // bool
            unsigned char* __restrict__ r_mod,  // bool
            unsigned char* __restrict__ r_min,  // bool
            unsigned char* __restrict__ r_max,  // bool
            float* __restrict__ r_pow,
            unsigned char* __restrict__ r_fma,  // bool
            unsigned char* __restrict__ r_clamp,  // bool
            unsigned char* __restrict__ r_where,  // bool
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
    const bool t0 = (a_v != 0);
    const bool t1 = (b_v != 0);
    const bool t2 = (c_v != 0);
    const float t3 = (float)t0;
    const float t4 = sqrtf(t3);
    const float t5 = rsqrtf(t3);
    const float t6 = expf(t3);
    const float t7 = exp2f(t3);
    const float t8 = logf(t3);
    const float t9 = log2f(t3);
    const float t10 = log10f(t3);
    const float t11 = sinf(t3);
    const float t12 = cosf(t3);
    const float t13 = tanf(t3);
    const float t14 = tanhf(t3);
    const float t15 = 1.0f / (1.0f + expf(-t3));
    const float t16 = erff(t3);
    const bool t17 = (bool)min(t0, t1);
    const bool t18 = (bool)max(t0, t1);
    const float t19 = powf(t3, (float)t1);
    const bool t20 = (bool)min(max(t0, t1), t2);
    r_neg[i] = t0;
    r_abs[i] = t0;
    r_floor[i] = t0;
    r_ceil[i] = t0;
    r_round[i] = t0;
    r_sqrt[i] = t4;
    r_rsqrt[i] = t5;
    r_exp[i] = t6;
    r_exp2[i] = t7;
    r_log[i] = t8;
    r_log2[i] = t9;
    r_log10[i] = t10;
    r_sin[i] = t11;
    r_cos[i] = t12;
    r_tan[i] = t13;
    r_tanh[i] = t14;
    r_sigmoid[i] = t15;
    r_erf[i] = t16;
    r_add[i] = (bool)(t0 + t1);
    r_sub[i] = (bool)(t0 - t1);
    r_mul[i] = (bool)(t0 * t1);
    r_div[i] = t0 && t1;
    r_mod[i] = false;
    r_min[i] = t17;
    r_max[i] = t18;
    r_pow[i] = t19;
    r_fma[i] = (bool)(t0 * t1 + t2);
    r_clamp[i] = t20;
    r_where[i] = (m_v != 0) ? t0 : t1;
    r_lt[i] = t0 < t1;
    r_le[i] = t0 <= t1;
    r_gt[i] = t0 > t1;
    r_ge[i] = t0 >= t1;
    r_eq[i] = t0 == t1;
    r_ne[i] = t0 != t1;
    r_and[i] = t0 && t1;
    r_or[i] = t0 || t1;
    r_not[i] = !t0;
    to_bool[i] = t0;
    to_u8[i] = (unsigned char)t0;
    to_i32[i] = (int)t0;
    to_i64[i] = (long long)t0;
    to_f16[i] = gk_f32_to_f16((float)t0);
    to_bf16[i] = gk_f32_to_bf16((float)t0);
    to_f32[i] = t3;
    to_f64[i] = (double)t0;
  }
}
