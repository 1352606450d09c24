/* bottom.h: the bottom line, the last line of every subcommand's text report: its verdict and the figures
 * the subcommand exists for, the same fields every time, e.g.
 *   ddpbench run: PASS  ddp 126.6 ms/step  64.7k samples/s  scaling 95.1 %  busbw 298 GB/s  weights identical  (8 ranks, 1 host; 0 fail, 0 warn)
 * The verdict follows the exit code: PASS (0, nothing to warn of), WARN (0 with warnings), FAIL (1, 4, 5: a
 * check failed: weights differ, a verdict failed, non-finite values), ERROR (2, 3: bad input, runtime error).
 * A figure that is not defined is "-" (the report above says why). The same line, the verdict and the exit
 * code are fields of the JSON result. Pure text: nothing here measures or communicates.
 *
 * defines: bottom_{verdict,compose,context,si,worst,scaling} */
#ifndef DDPBENCH_BOTTOM_H
#define DDPBENCH_BOTTOM_H

#include <stddef.h>

#include "findings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "PASS", "WARN", "FAIL" or "ERROR" for an exit code and the findings. */
const char *bottom_verdict(int exit_code, const finding_list *f);
/* The worse of two verdicts (ERROR before FAIL before WARN before PASS). */
const char *bottom_worst(const char *a, const char *b);
/* "ddpbench COMMAND: VERDICT  FIGURES  (CONTEXT)" into out (figures may be ""). */
void bottom_compose(char *out, size_t n, const char *command, const char *verdict, const char *figures,
                    const char *context);
/* "N ranks, H hosts; F fail, W warn" (ranks 0: "F fail, W warn" alone). */
void bottom_context(char *out, size_t n, int ranks, int hosts, const finding_list *f);
/* A figure with 3 or 4 significant digits and a k, M, G suffix past 10,000 ("64.7k"); "-" when not finite. */
void bottom_si(double v, char *out, size_t n);
/* A figure with 4 significant digits, "-" when not finite ("126.6", "0.7073"). */
void bottom_num(double v, char *out, size_t n);
/* The scaling efficiency e with its noise (both fractions; the noise a half-width): "88.8 % ±30.4"; when the
 * noise exceeds BOTTOM_SCALING_NOISE_MAX or e ± noise holds 100 %, "cannot tell (88.8 % ±92.8)": such a figure
 * says nothing about the job's scaling. "-" when e is not finite, "88.8 %" alone when the noise is unknown. */
#define BOTTOM_SCALING_NOISE_MAX 0.25
void bottom_scaling(double e, double noise, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
