/* sim_rng.h: the simulators' seeded random numbers (test-only): splitmix64 from the seed 20261207 in rng
 * (a test may save and restore it for common random numbers), uniform on (0, 1), standard Gaussian, Student t(3). */
#ifndef DDPBENCH_TESTS_SIM_RNG_H
#define DDPBENCH_TESTS_SIM_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t rng = 20261207;
static inline double urand(void) { /* splitmix64, (0, 1) */
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull, z = (z ^ (z >> 27)) * 0x94D049BB133111EBull, z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static inline double gauss(void) { return sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand()); }
static inline double t3(void) {
  double z = gauss(), c = 0;
  for (int i = 0; i < 3; i++) {
    double g = gauss();
    c += g * g;
  }
  return z / sqrt(c / 3);
}

#endif
