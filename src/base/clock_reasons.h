/* clock_reasons.h: NVML's clock-event reasons (nvmlClocksEventReasons, nvml.h's bit values) as words, and
 * which of them mean a fault: the vocabulary that the device layer samples (nvml_dl.c), the verdicts judge and
 * the subcommands print. Pure: nothing here loads NVML.
 *
 * defines: NVML_DL_REASON_*, nvml_reasons_str, nvml_reasons_bad */
#ifndef DDPBENCH_CLOCK_REASONS_H
#define DDPBENCH_CLOCK_REASONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* nvmlClocksEventReasons bits (NVML nvml.h); 0x1 = idle. */
enum {
  NVML_DL_REASON_IDLE = 0x1,
  NVML_DL_REASON_APP_CLOCKS = 0x2,
  NVML_DL_REASON_SW_POWER_CAP = 0x4,
  NVML_DL_REASON_HW_SLOWDOWN = 0x8,
  NVML_DL_REASON_SYNC_BOOST = 0x10,
  NVML_DL_REASON_SW_THERMAL = 0x20,
  NVML_DL_REASON_HW_THERMAL = 0x40,
  NVML_DL_REASON_HW_POWER_BRAKE = 0x80,
};

/* "SW power cap, HW thermal" (or "none") for a reasons mask; buf returned. */
const char *nvml_reasons_str(unsigned long long reasons, char *buf, size_t n);
/* Reasons that mean a fault rather than normal operation under load: HW slowdown, HW/SW thermal, power
 * brake. The SW power cap is a healthy GPU at its power limit (an H200 under a sustained GEMM sits there). */
static inline unsigned long long nvml_reasons_bad(unsigned long long r) {
  return r & (NVML_DL_REASON_HW_SLOWDOWN | NVML_DL_REASON_SW_THERMAL | NVML_DL_REASON_HW_THERMAL |
              NVML_DL_REASON_HW_POWER_BRAKE);
}

#ifdef __cplusplus
}
#endif
#endif
