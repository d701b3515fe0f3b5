// gpukit kernel ew_c0a8c21f — every operation on f64

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
__device__ __forceinline__ unsigned char gk_f64_to_u8(double x) {
  return x != x ? 0 : (unsigned char)min(__double2uint_rz(x), 255u);
}

// Truncates toward zero and saturates; NaN -> 0.
__device__ __forceinline__ int gk_f64_to_i32(double x) {
  return x != x ? 0 : __double2int_rz(x);
}

// Truncates toward zero and saturates; NaN -> 0.
__device__ __forceinline__ long long gk_f64_to_i64(double x) {
  return x != x ? 0 : __double2ll_rz(x);
}

extern "C" __global__ void __launch_bounds__(256)
ew_c0a8c21f(const double* __restrict__ a,
            const double* __restrict__ b,
            const double* __restrict__ c,
            const unsigned char* __restrict__ m,  // bool
            double* __restrict__ r_neg,
            double* __restrict__ r_abs,
            double* __restrict__ r_floor,
            double* __restrict__ r_ceil,
            double* __restrict__ r_round,
            double* __restrict__ r_sqrt,
            double* __restrict__ r_rsqrt,
            double* __restrict__ r_exp,
            double* __restrict__ r_exp2,
            double* __restrict__ r_log,
            double* __restrict__ r_log2,
            double* __restrict__ r_log10,
            double* __restrict__ r_sin,
            double* __restrict__ r_cos,
            double* __restrict__ r_tan,
            double* __restrict__ r_tanh,
            double* __restrict__ r_sigmoid,
            double* __restrict__ r_erf,
            double* __restrict__ r_add,
            double* __restrict__ r_sub,
            double* __restrict__ r_mul,
            double* __restrict__ r_div,
            double* __restrict__ r_mod,
            double* __restrict__ r_min,
            double* __restrict__ r_max,
            double* __restrict__ r_pow,
            double* __restrict__ r_fma,
            double* __restrict__ r_clamp,
            double* __restrict__ r_where,
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
    const double a_v = a[i];
    const double b_v = b[i];
    const double c_v = c[i];
    const unsigned char m_v = m[i];
    const double t0 = fabs(a_v);
    const double t1 = floor(a_v);
    const double t2 = ceil(a_v);
    const double t3 = round(a_v);
    const double t4 = sqrt(a_v);
    const double t5 = rsqrt(a_v);
    const double t6 = exp(a_v);
    const double t7 = exp2(a_v);
    const double t8 = log(a_v);
    const double t9 = log2(a_v);
    const double t10 = log10(a_v);
    const double t11 = sin(a_v);
    const double t12 = cos(a_v);
    const double t13 = tan(a_v);
    const double t14 = tanh(a_v);
    const double t15 = 1.0 / (1.0 + exp(-a_v));
    const double t16 = erf(a_v);
    const double t17 = fmod(a_v, b_v);
    const double t18 = fmin(a_v, b_v);
    const double t19 = fmax(a_v, b_v);
    const double t20 = pow(a_v, b_v);
    const double t21 = fma(a_v, b_v, c_v);
    const double t22 = fmin(fmax(a_v, b_v), c_v);
    const bool t23 = a_v != 0.0;
    const bool t24 = b_v != 0.0;
    const unsigned char t25 = gk_f64_to_u8(a_v);
    const int t26 = gk_f64_to_i32(a_v);
    const long long t27 = gk_f64_to_i64(a_v);
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
    to_f16[i] = gk_f32_to_f16((float)a_v);
    to_bf16[i] = gk_f32_to_bf16((float)a_v);
    to_f32[i] = (float)a_v;
    to_f64[i] = a_v;
  }
}
