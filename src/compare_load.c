/* compare_load.c: result files -> runs -> provenance diff and metrics for compare.c. Reads result files only
 * through the project's one reader (result.h); never parses JSON itself. */
#include "common.h"
#include "compare.h"

int cmp_load(char **a, int na, char **b, int nb, const cmp_noise *noise, int allow_config_diff, cmp_report *r) {
  return ddp_usage_error("compare: reading result files is not built yet"), 2;
}
