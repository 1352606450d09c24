/* test_numerics: the generator's known values (computed independently, in Python), float <-> bf16/fp16
 * rounding at its edges, and GradScaler's update rule as a state machine. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "numerics.h"

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static void test_generator(void) {
  CHECK(splitmix64(0) == 0xe220a8397b1dcdafull, "splitmix64(0) = %016llx", (unsigned long long)splitmix64(0));
  CHECK(splitmix64(0x9E3779B97F4A7C15ull) == 0x6e789e6aa1b965f4ull, "second value of the reference sequence");
  CHECK(splitmix64(1) == 0x910a2dec89025cc1ull, "splitmix64(1)");
  CHECK(splitmix64(42) == 0xbdd732262feb6e95ull, "splitmix64(42)");
  /* u and the rounded values, from an independent implementation. */
  CHECK(gen_u(gen_key(42, 0x101), 0) == 0.05204641819000244, "u(42, W_1, 0) = %.17g", gen_u(gen_key(42, 0x101), 0));
  CHECK(gen_u(gen_key(42, 0x101), 1) == 0.7324650287628174, "u(42, W_1, 1)");
  double b = sqrt(6.0 / 1024);
  CHECK(bits(gen_value(gen_key(42, 0x101), 0, b)) == 0xbd8c72f1u, "W_1[0] bits %08x", bits(gen_value(gen_key(42, 0x101), 0, b)));
  CHECK(bits(gen_value(gen_key(42, 0x101), 1, b)) == 0x3d11c58eu, "W_1[1] bits");
  CHECK(bits(gen_value(gen_key(42, 0x200), 5, 1.0)) == 0x3e144048u, "x[5] bits");
  CHECK(bits(gen_value(gen_key(7, 0x300), 123456789, 1.0)) == 0x3de99a40u, "t[123456789] bits, seed 7");
  /* Range and mean of many draws: (2u - 1) * bound lies in [-bound, bound) and averages near 0. */
  double sum = 0, lo = 1, hi = -1;
  uint64_t key = gen_key(1, TAG_INPUT);
  for (int i = 0; i < 100000; i++) {
    float v = gen_value(key, (uint64_t)i, 1.0);
    sum += v;
    lo = fmin(lo, v);
    hi = fmax(hi, v);
  }
  CHECK(lo >= -1.0 && hi < 1.0 && lo < -0.999 && hi > 0.999, "range [%g, %g]", lo, hi);
  CHECK(fabs(sum / 100000) < 0.01, "mean %g", sum / 100000);
}

static void test_16bit(void) {
  /* bf16: round to nearest even on the 16 dropped bits. */
  CHECK(bf16_from_f32(1.0f) == 0x3f80, "bf16(1)");
  CHECK(bf16_from_f32(-2.0f) == 0xc000, "bf16(-2)");
  CHECK(bf16_from_f32(f32_from_bits(0x3f808000u)) == 0x3f80, "tie rounds to even (down)");
  CHECK(bf16_from_f32(f32_from_bits(0x3f818000u)) == 0x3f82, "tie rounds to even (up)");
  CHECK(bf16_from_f32(f32_from_bits(0x3f808001u)) == 0x3f81, "above the tie rounds up");
  CHECK(bf16_from_f32(f32_from_bits(0x7f7fffffu)) == 0x7f80, "FLT_MAX rounds to inf");
  CHECK((bf16_from_f32(NAN) & 0x7fff) > 0x7f80, "NaN stays NaN");
  CHECK(bf16_to_f32(0x4049) == f32_from_bits(0x40490000u), "bf16 -> f32 is a shift");
  /* fp16: normals, ties, overflow, subnormals. */
  CHECK(fp16_from_f32(1.0f) == 0x3c00, "fp16(1)");
  CHECK(fp16_from_f32(65504.0f) == 0x7bff, "fp16 max");
  CHECK(fp16_from_f32(65519.99f) == 0x7bff, "just below the rounding point stays finite");
  CHECK(fp16_from_f32(65520.0f) == 0x7c00, "65520 rounds to inf");
  CHECK(fp16_from_f32(-1e9f) == 0xfc00, "-inf");
  CHECK(fp16_from_f32(1.0f + 1.0f / 2048) == 0x3c00, "tie 1 + 2^-11 rounds to even 1");
  CHECK(fp16_from_f32(1.0f + 3.0f / 2048) == 0x3c02, "tie 1 + 3*2^-11 rounds to even");
  CHECK(fp16_from_f32(ldexpf(1, -24)) == 0x0001, "smallest subnormal");
  CHECK(fp16_from_f32(ldexpf(1, -25)) == 0x0000, "half of it ties to even zero");
  CHECK(fp16_from_f32(ldexpf(1.5f, -25)) == 0x0001, "above the tie rounds up");
  CHECK(fp16_from_f32(ldexpf(1, -14)) == 0x0400, "smallest normal");
  CHECK(fp16_from_f32(ldexpf(1023, -24) + ldexpf(1, -25)) == 0x0400, "subnormal rounding carries into the exponent");
  CHECK(fp16_from_f32(-0.0f) == 0x8000, "-0");
  CHECK((fp16_from_f32(NAN) & 0x7c00) == 0x7c00 && (fp16_from_f32(NAN) & 0x3ff), "NaN stays NaN");
  /* Every fp16 value converts to float and back unchanged (inf/NaN excluded). */
  int roundtrip_bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00) continue;
    if (fp16_from_f32(fp16_to_f32((uint16_t)h)) != h) roundtrip_bad++;
  }
  CHECK(roundtrip_bad == 0, "%d fp16 values did not survive f32 and back", roundtrip_bad);
  CHECK(fp16_to_f32(0x0001) == ldexpf(1, -24) && fp16_to_f32(0xc000) == -2.0f, "fp16 -> f32");
}

static void test_scaler(void) {
  scaler_cfg c = {65536, 2, 0.5, 3};
  float scale = 65536;
  int tracker = 0;
  scaler_update(&scale, &tracker, 1, &c);
  CHECK(scale == 32768 && tracker == 0, "non-finite: back off (%g, %d)", scale, tracker);
  scaler_update(&scale, &tracker, 0, &c);
  scaler_update(&scale, &tracker, 0, &c);
  CHECK(scale == 32768 && tracker == 2, "two finite steps: no growth yet (%g, %d)", scale, tracker);
  scaler_update(&scale, &tracker, 0, &c);
  CHECK(scale == 65536 && tracker == 0, "growth exactly at the interval (%g, %d)", scale, tracker);
  scaler_update(&scale, &tracker, 0, &c);
  scaler_update(&scale, &tracker, 0, &c);
  scaler_update(&scale, &tracker, 1, &c);
  CHECK(scale == 32768 && tracker == 0, "an overflow resets the counter (%g, %d)", scale, tracker);
  scaler_update(&scale, &tracker, 0, &c);
  scaler_update(&scale, &tracker, 0, &c);
  CHECK(scale == 32768 && tracker == 2, "counting starts again from zero");
  /* Never grows past fp32: the scale stays finite. */
  scaler_cfg g = {1, 1e30, 0.5, 1};
  float big = 3e38f;
  int t2 = 0;
  scaler_update(&big, &t2, 0, &g);
  CHECK(big == 3e38f && t2 == 0, "growth that would overflow is skipped (%g)", big);
  /* The defaults' interval: 2000 finite steps double the scale, 1999 do not. */
  scaler_cfg d = {65536, 2, 0.5, 2000};
  float s = 65536;
  int tr = 0;
  for (int i = 0; i < 1999; i++) scaler_update(&s, &tr, 0, &d);
  CHECK(s == 65536 && tr == 1999, "1999 steps");
  scaler_update(&s, &tr, 0, &d);
  CHECK(s == 131072 && tr == 0, "2000th step doubles");
}

int main(void) {
  test_generator();
  test_16bit();
  test_scaler();
  return check_summary();
}
