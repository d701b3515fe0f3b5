// gpukit kernel ew_3bdc3b0b — every operation on f32

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
ew_3bdc3b0b(const float* __restrict__ a,
            const float* __restrict__ b,
            const float* __restrict__ c,
            const unsigned char* __restrict__ m,  // bool
            float* __restrict__ r_neg,
            float* __restrict__ r_abs,
            float* __restrict__ r_floor,
            float* __restrict__ r_ceil,
            float* __restrict__ r_round,
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
            float* __restrict__ r_add,
            float* __restrict__ r_sub,
            float* __restrict__ r_mul,
            float* __restrict__ r_div,
            float* __restrict__ r_mod,
            float* __restrict__ r_min,
            float* __restrict__ r_max,
            float* __restrict__ r_pow,
            float* __restrict__ r_fma,
            float* __restrict__ r_clamp,
            float* __restrict__ r_where,
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
    const float a_v = a[i];
    const float b_v = b[i];
    const float c_v = c[i];
    const unsigned char m_v = m[i];
    const float t0 = fabsf(a_v);
    const float t1 = floorf(a_v);
    const float t2 = ceilf(a_v);
    const float t3 = roundf(a_v);
    const float t4 = sqrtf(a_v);
    const float t5 = rsqrtf(a_v);
    const float t6 = expf(a_v);
    const float t7 = exp2f(a_v);
    const float t8 = logf(a_v);
    const float t9 = log2f(a_v);
    const float t10 = log10f(a_v);
    const float t11 = sinf(a_v);
    const float t12 = cosf(a_v);
    const float t13 = tanf(a_v);
    const float t14 = tanhf(a_v);
    const float t15 = 1.0f / (1.0f + expf(-a_v));
    const float t16 = erff(a_v);
    const float t17 = fmodf(a_v, b_v);
    const float t18 = fminf(a_v, b_v);
    const float t19 = fmaxf(a_v, b_v);
    const float t20 = powf(a_v, b_v);
    const float t21 = fmaf(a_v, b_v, c_v);
    const float t22 = fminf(fmaxf(a_v, b_v), c_v);
    const bool t23 = a_v != 0.0f;
    const bool t24 = b_v != 0.0f;
    const unsigned char t25 = gk_f32_to_u8(a_v);
    const int t26 = gk_f32_to_i32(a_v);
    const long long t27 = gk_f32_to_i64(a_v);
    r_neg[i] = -a_v;
    r_abs[i] = t0;
    r_floor[i] = t1;
    r_ceil[i] = t2;
    r_round[i] = t3;
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
    r_add[i] = a_v + b_v;
    r_sub[i] = a_v - b_v;
    r_mul[i] = a_v * b_v;
    r_div[i] = a_v / b_v;
    r_mod[i] = t17;
    r_min[i] = t18;
    r_max[i] = t19;
    r_pow[i] = t20;
    r_fma[i] = t21;
    r_clamp[i] = t22;
    r_where[i] = (m_v != 0) ? a_v : b_v;
    r_lt[i] = a_v < b_v;
    r_le[i] = a_v <= b_v;
    r_gt[i] = a_v > b_v;
    r_ge[i] = a_v >= b_v;
    r_eq[i] = a_v == b_v;
    r_ne[i] = a_v != b_v;
    r_and[i] = t23 && t24;
    r_or[i] = t23 || t24;
    r_not[i] = !t23;
    to_bool[i] = t23;
    to_u8[i] = t25;
    to_i32[i] = t26;
    to_i64[i] = t27;
    to_f16[i] = gk_f32_to_f16(a_v);
    to_bf16[i] = gk_f32_to_bf16(a_v);
    to_f32[i] = a_v;
    to_f64[i] = (double)a_v;
  }
}
