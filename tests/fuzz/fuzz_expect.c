/* fuzz_expect: libFuzzer target for the acceptance expectations file (`ddpbench accept --expect FILE`):
 * expect_load_file over the built-in H200 row. Properties checked on every input: it ends with OK or a usage
 * error that says why (never a crash, sanitizer report or hang); every figure it leaves is NaN or a finite
 * number >= 0; and an accepted file's figures, written back as INI and read over the same table, give the
 * same set. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"

static char path[64], back[64];

static ddp_result load(expect_set *e, const char *p, const uint8_t *data, size_t n) {
  FILE *f = fopen(p, "wb");
  if (!f) abort();
  fwrite(data, 1, n, f);
  fclose(f);
  expect_builtin(e, "NVIDIA H200", 5, 16, 6);
  return expect_load_file(e, p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/ddpbench-fuzz-expect-%ld.ini", (long)getpid());
    snprintf(back, sizeof back, "/tmp/ddpbench-fuzz-expect-%ld.back.ini", (long)getpid());
  }
  static expect_set e, again;
  char msg[1400];
  ddp_usage_capture(msg, sizeof msg);
  ddp_result r = load(&e, path, data, n);
  if (r != DDP_OK && r != DDP_ERR_USAGE) abort();
  if (r == DDP_ERR_USAGE && !msg[0]) abort(); /* every refusal says why */
  for (int k = 0; k < EXP_COUNT; k++)
    if (!isnan(e.v[k]) && !(isfinite(e.v[k]) && e.v[k] >= 0)) abort();
  if (r == DDP_OK) {
    char ini[2048];
    size_t m = 0;
    for (int k = 0; k < EXP_COUNT; k++)
      if (!isnan(e.v[k]) && m < sizeof ini)
        m += (size_t)snprintf(ini + m, sizeof ini - m, "%s = %.17g\n", expect_keys[k].name, e.v[k]);
    if (m >= sizeof ini) abort();
    if (load(&again, back, (const uint8_t *)ini, m) != DDP_OK) abort();
    for (int k = 0; k < EXP_COUNT; k++)
      if (!(e.v[k] == again.v[k] || (isnan(e.v[k]) && isnan(again.v[k])))) abort();
  }
  ddp_usage_capture(NULL, 0);
  return 0;
}
