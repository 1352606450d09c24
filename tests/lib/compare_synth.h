/* compare_synth.h: seeded samples for the compare tests: splitmix64 and Box-Muller normals, so that every data set
 * is the same on every machine. Test-only; header-only. */
#ifndef DDPBENCH_TESTS_COMPARE_SYNTH_H
#define DDPBENCH_TESTS_COMPARE_SYNTH_H

#include <math.h>
#include <stdint.h>

typedef struct {
  uint64_t s;
} synth_rng;

static inline uint64_t synth_next(synth_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static inline double synth_uniform(synth_rng *r) { return ((double)(synth_next(r) >> 11) + 0.5) * 0x1p-53; }

static inline double synth_normal(synth_rng *r) {
  double u1 = synth_uniform(r), u2 = synth_uniform(r);
  return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* n values centre * (1 + noise * N(0, 1)) */
static inline void synth_fill(synth_rng *r, double *x, int n, double centre, double noise) {
  for (int i = 0; i < n; i++) x[i] = centre * (1 + noise * synth_normal(r));
}

#endif
