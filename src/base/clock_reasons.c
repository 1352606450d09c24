/* clock_reasons.c: a reasons mask in words (clock_reasons.h). */
#include "clock_reasons.h"

#include <stdio.h>

const char *nvml_reasons_str(unsigned long long r, char *buf, size_t n) {
  static const struct {
    unsigned long long bit;
    const char *name;
  } names[] = {{NVML_DL_REASON_IDLE, "idle"},           {NVML_DL_REASON_APP_CLOCKS, "application clocks"},
               {NVML_DL_REASON_SW_POWER_CAP, "SW power cap"}, {NVML_DL_REASON_HW_SLOWDOWN, "HW slowdown"},
               {NVML_DL_REASON_SYNC_BOOST, "sync boost"},  {NVML_DL_REASON_SW_THERMAL, "SW thermal"},
               {NVML_DL_REASON_HW_THERMAL, "HW thermal"},  {NVML_DL_REASON_HW_POWER_BRAKE, "HW power brake"}};
  size_t k = 0;
  if (n) buf[0] = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (r & names[i].bit) k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s", k ? ", " : "", names[i].name);
  if (!k) snprintf(buf, n, r ? "0x%llx" : "none", r);
  return buf;
}
