// gpukit kernel ew_ede322c1 — every operation on bf16

// Rounds to nearest even; overflows to infinity.
__device__ __forceinline__ unsigned short gk_f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

__device__ __forceinline__ float gk_bf16_to_f32(unsigned short b) {
  return __uint_as_float((unsigned)b << 16);
}

// Rounds to nearest even (cvt.rn.bf16.f32 needs sm_80).
__device__ __forceinline__ unsigned short gk_f32_to_bf16(float f) {
  unsigned short b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}

// Truncates toward zero and saturates; NaN -> 0.
__device__ __forceinline__ unsigned char gk_f32_to_u8(float x) {
  return x != x ? 0 : (unsigned char)min(__float2uint_rz(x), 255u);
}

// Truncates toward zero and saturates; NaN -> 0.
__device__ __forceinline__ int gk_f32_to_i32(float x) {
  return x != x ? 0 : __float2int_rz(x);
}

// Truncates toward zero and saturates; NaN -> 0.
__device__ __forceinline__ long long gk_f32_to_i64(float x) {
  return x != x ? 0 : __float2ll_rz(x);
}

extern "C" __global__ void __launch_bounds__(256)
ew_ede322c1(const unsigned short* __restrict__ a,  // bf16
            const unsigned short* __restrict__ b,  // bf16
            const unsigned short* __restrict__ c,  // bf16
            const unsigned char* __restrict__ m,  // bool
            unsigned short* __restrict__ r_neg,  // bf16
            unsigned short* __restrict__ r_abs,  // bf16
            unsigned short* __restrict__ r_floor,  // bf16
            unsigned short* __restrict__ r_ceil,  // bf16
            unsigned short* __restrict__ r_round,  // bf16
            unsigned short* __restrict__ r_sqrt,  // bf16
            unsigned short* __restrict__ r_rsqrt,  // bf16
            unsigned short* __restrict__ r_exp,  // bf16
            unsigned short* __restrict__ r_exp2,  // bf16
            unsigned short* __restrict__ r_log,  // bf16
            unsigned short* __restrict__ r_log2,  // bf16
            unsigned short* __restrict__ r_log10,  // bf16
            unsigned short* __restrict__ r_sin,  // bf16
            unsigned short* __restrict__ r_cos,  // bf16
            unsigned short* __restrict__ r_tan,  // bf16
            unsigned short* __restrict__ r_tanh,  // bf16
            unsigned short* __restrict__ r_sigmoid,  // bf16
            unsigned short* __restrict__ r_erf,  // bf16
            unsigned short* __restrict__ r_add,  // bf16
            unsigned short* __restrict__ r_sub,  // bf16
            unsigned short* __restrict__ r_mul,  // bf16
            unsigned short* __restrict__ r_div,  // bf16
            unsigned short* __restrict__ r_mod,  // bf16
            unsigned short* __restrict__ r_min,  // bf16
            unsigned short* __restrict__ r_max,  // bf16
            unsigned short* __restrict__ r_pow,  // bf16
            unsigned short* __restrict__ r_fma,  // bf16
            unsigned short* __restrict__ r_clamp,  // bf16
            unsigned short* __restrict__ r_where,  // bf16
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
    const unsigned short a_v = a[i];
    const unsigned short b_v = b[i];
    const unsigned short c_v = c[i];
    const unsigned char m_v = m[i];
    const float t0 = gk_bf16_to_f32(a_v);
    const float t1 = gk_bf16_to_f32(b_v);
    const float t2 = gk_bf16_to_f32(c_v);
    const float t3 = fabsf(t0);
    const float t4 = floorf(t0);
    const float t5 = ceilf(t0);
    const float t6 = roundf(t0);
    const float t7 = sqrtf(t0);
    const float t8 = rsqrtf(t0);
    const float t9 = expf(t0);
    const float t10 = exp2f(t0);
    const float t11 = logf(t0);
    const float t12 = log2f(t0);
    const float t13 = log10f(t0);
    const float t14 = sinf(t0);
    const float t15 = cosf(t0);
    const float t16 = tanf(t0);
    const float t17 = tanhf(t0);
    const float t18 = 1.0f / (1.0f + expf(-t0));
    const float t19 = erff(t0);
    const float t20 = fmodf(t0, t1);
    const float t21 = fminf(t0, t1);
    const float t22 = fmaxf(t0, t1);
    const float t23 = powf(t0, t1);
    const float t24 = fmaf(t0, t1, t2);
    const float t25 = fminf(fmaxf(t0, t1), t2);
    const bool t26 = t0 != 0.0f;
    const bool t27 = t1 != 0.0f;
    const unsigned char t28 = gk_f32_to_u8(t0);
    const int t29 = gk_f32_to_i32(t0);
    const long long t30 = gk_f32_to_i64(t0);
    r_neg[i] = gk_f32_to_bf16(-t0);
    r_abs[i] = gk_f32_to_bf16(t3);
    r_floor[i] = gk_f32_to_bf16(t4);
    r_ceil[i] = gk_f32_to_bf16(t5);
    r_round[i] = gk_f32_to_bf16(t6);
    r_sqrt[i] = gk_f32_to_bf16(t7);
    r_rsqrt[i] = gk_f32_to_bf16(t8);
    r_exp[i] = gk_f32_to_bf16(t9);
    r_exp2[i] = gk_f32_to_bf16(t10);
    r_log[i] = gk_f32_to_bf16(t11);
    r_log2[i] = gk_f32_to_bf16(t12);
    r_log10[i] = gk_f32_to_bf16(t13);
    r_sin[i] = gk_f32_to_bf16(t14);
    r_cos[i] = gk_f32_to_bf16(t15);
    r_tan[i] = gk_f32_to_bf16(t16);
    r_tanh[i] = gk_f32_to_bf16(t17);
    r_sigmoid[i] = gk_f32_to_bf16(t18);
    r_erf[i] = gk_f32_to_bf16(t19);
    r_add[i] = gk_f32_to_bf16(t0 + t1);
    r_sub[i] = gk_f32_to_bf16(t0 - t1);
    r_mul[i] = gk_f32_to_bf16(t0 * t1);
    r_div[i] = gk_f32_to_bf16(t0 / t1);
    r_mod[i] = gk_f32_to_bf16(t20);
    r_min[i] = gk_f32_to_bf16(t21);
    r_max[i] = gk_f32_to_bf16(t22);
    r_pow[i] = gk_f32_to_bf16(t23);
    r_fma[i] = gk_f32_to_bf16(t24);
    r_clamp[i] = gk_f32_to_bf16(t25);
    r_where[i] = gk_f32_to_bf16((m_v != 0) ? t0 : t1);
    r_lt[i] = t0 < t1;
    r_le[i] = t0 <= t1;
    r_gt[i] = t0 > t1;
    r_ge[i] = t0 >= t1;
    r_eq[i] = t0 == t1;
    r_ne[i] = t0 != t1;
    r_and[i] = t26 && t27;
    r_or[i] = t26 || t27;
    r_not[i] = !t26;
    to_bool[i] = t26;
    to_u8[i] = t28;
    to_i32[i] = t29;
    to_i64[i] = t30;
    to_f16[i] = gk_f32_to_f16(t0);
    to_bf16[i] = gk_f32_to_bf16(t0);
    to_f32[i] = t0;
    to_f64[i] = (double)t0;
  }
}
