/* envcheck.h: the cross-rank environment comparison: every rank's software versions (ddp_versions) and
 * NCCL_* variables, compared on rank 0, each difference printed with the ranks that hold each value. Pure
 * functions over gathered records: nothing here uses MPI, reads files or fails the program.
 *
 * defines: envcheck_rank, envcheck_nccl_env, envcheck_version_field, envcheck_compare, envcheck_print_versions, envcheck_versions_json,
 *          rankset_format */
#ifndef DDPBENCH_ENVCHECK_H
#define DDPBENCH_ENVCHECK_H

#include <stdio.h>

#include <cJSON.h>

#include "versions.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's environment as rank 0 received it. */
typedef struct {
  int rank;
  const ddp_versions *versions;
  const char *nccl_env; /* "NAME=value\n" lines, sorted by name */
} envcheck_rank;

/* This process's NCCL_* variables as sorted "NAME=value\n" lines in buf (a secret-looking name's value as
 * RESULT_REDACTED, result_env_redacted's rule) (whole lines only: a variable that
 * does not fit is dropped and the function returns 1; else 0). */
int envcheck_nccl_env(char *buf, size_t n);
/* Compares every version field and every NCCL_* variable (unset counts as a value) across ranks[0..n).
 * For each item that differs: prints "  <item> differs: <value> on ranks 0-2; <value> on rank 3" to out
 * (NULL: no text) and appends {"item", "values": [{"value", "ranks"}]} to the JSON array diffs (NULL: none).
 * Returns the number of differing items. */
int envcheck_compare(const envcheck_rank *ranks, int n, FILE *out, cJSON *diffs);
/* The version fields one by one (the one list of them, for printing, serialising and comparing): the i-th
 * field's value and JSON name ("nccl_runtime"); NULL when i is past the last field. name may be NULL. */
const char *envcheck_version_field(const ddp_versions *v, int i, const char **name);
/* One line with the versions of v that are set: "driver 580.159.04 (CUDA 13.0), CUDA runtime 13.0, ...". */
void envcheck_print_versions(const ddp_versions *v, FILE *out);
/* {"mpi": ..., "nccl_runtime": ..., ...}: every field of v by its name; NULL when out of memory. */
cJSON *envcheck_versions_json(const ddp_versions *v);
/* "rank 3" or "ranks 0-3,5,7-9" for the ranks in ascending order; "..." when it does not fit. */
void rankset_format(const int *ranks, int n, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
