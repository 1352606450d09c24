/* numerics.h: the arithmetic both devices must do identically, written once for the C compiler and nvcc:
 * the counter-based generator (splitmix64) that makes weights and data reproducible for any rank count,
 * float <-> bf16/fp16 conversions with round-to-nearest-even (bit-identical to CUDA's __float2*_rn), and
 * GradScaler's update rule as a pure state machine. Header-only, no allocation, no I/O. */
#ifndef DDPBENCH_NUMERICS_H
#define DDPBENCH_NUMERICS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define DDP_HD __host__ __device__ __forceinline__
#else
#define DDP_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- generator ---------------------------------------------------------------------------------- */
/* Tags of the generated tensors: W_l uses TAG_WEIGHT + l (l = 1..L), i = row*H + col (row = output
 * feature); x uses TAG_INPUT and t TAG_TARGET with i = g*H + j for global sample g. */
enum { TAG_WEIGHT = 0x100, TAG_INPUT = 0x200, TAG_TARGET = 0x300, TAG_FILL = 0x400 };

DDP_HD uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Stream key of (seed, tag): hoisted out of element loops. */
DDP_HD uint64_t gen_key(uint64_t seed, uint64_t tag) { return splitmix64(seed ^ tag); }

/* u in [0, 1) with 24 random bits: (splitmix64(key + i) >> 40) * 2^-24. */
DDP_HD double gen_u(uint64_t key, uint64_t i) { return (double)(splitmix64(key + i) >> 40) * (1.0 / 16777216.0); }

/* value = (2u - 1) * bound, computed in double and rounded once to float. */
DDP_HD float gen_value(uint64_t key, uint64_t i, double bound) { return (float)((2.0 * gen_u(key, i) - 1.0) * bound); }

/* ---- 16-bit floating point ---------------------------------------------------------------------- */
DDP_HD uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
DDP_HD float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

DDP_HD uint16_t bf16_from_f32(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);                                         /* round to nearest even */
  return (uint16_t)(u >> 16);
}
DDP_HD float bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

DDP_HD uint16_t fp16_from_f32(float f) {
  uint32_t u = f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf (or is inf) */
  if (a < 0x38800000u) {                                    /* below 2^-14: subnormal or zero */
    if (a < 0x33000000u) return (uint16_t)sign;             /* below half of the smallest subnormal */
    uint32_t exp = a >> 23;
    uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - exp;                            /* 14..24: value = mant * 2^(exp-150) */
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = a - 0x38000000u; /* rebias exponent 127 -> 15, keep 23-bit mantissa */
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
}
DDP_HD float fp16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) return f32_from_bits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = (float)mant * (1.0f / 16777216.0f); /* mant * 2^-24, exact */
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* ---- dynamic loss scaling (torch.amp.GradScaler.update) ----------------------------------------- */
typedef struct {
  double init, growth_factor, backoff; /* 65536, 2, 0.5 by default */
  int growth_interval;                 /* 2000 */
} scaler_cfg;

/* One update after a step whose gradients were (found_inf != 0) or were not all finite. On a non-finite
 * step the scale is multiplied by backoff and the growth counter resets; after growth_interval
 * consecutive finite steps it is multiplied by growth_factor (unless that overflows fp32) and the counter
 * resets. The products are formed in double and narrowed, as PyTorch's kernel does. */
DDP_HD void scaler_update(float *scale, int *tracker, int found_inf, const scaler_cfg *c) {
  if (found_inf) {
    *scale = (float)((double)*scale * c->backoff);
    *tracker = 0;
    return;
  }
  int s = *tracker + 1;
  if (s == c->growth_interval) {
    float grown = (float)((double)*scale * c->growth_factor);
    if (isfinite(grown)) *scale = grown;
    *tracker = 0;
  } else {
    *tracker = s;
  }
}

#ifdef __cplusplus
}
#endif
#endif
