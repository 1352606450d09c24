/* hosts.h: the one verdict per host, for every subcommand. A host's verdict is the worst severity of the
 * findings that name it (finding.host); with strict a warning fails its host too, except a grey-zone node of
 * the pair model (check "pair_retest": retested, never drained; strict fails the run for it). A finding that names no host
 * (the job's weights, a pair of hosts, a link between them) fails the run without failing a host: the drain
 * list names only hosts a check blamed. The printed block, the same everywhere:
 *   # hosts: failing and warning checks
 *   node07: fail gemm_bf16 rank 3 0000:06:00.0: ... [312 vs 700 TFLOP/s]
 *   job: fail weights job: ...                      (findings about no host: "job", or their subject)
 *   hosts: 63 pass, 0 warn, 1 fail
 * Pure: no MPI, no measuring.
 *
 * defines: hosts_verdict, hosts_{judge,print} */
#ifndef DDPBENCH_HOSTS_H
#define DDPBENCH_HOSTS_H

#include <stdio.h>

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int pass, warn, fail;   /* hosts */
  int failing_findings;   /* findings that fail the run (strict: warnings too), whoever they name */
} hosts_verdict;

/* The verdict of every host in hosts[0..n) (duplicates counted once) from d's findings; the failing ones are
 * added to d->failed_hosts in that order. */
ddp_result hosts_judge(result_doc *d, const char *const *hosts, int n, int strict, hosts_verdict *v);
/* The block above, from d's findings; every line begins with prefix ("# " in nccl-tests' tables, where lines
 * that do not start with '#' are the rows; "" elsewhere). */
void hosts_print(FILE *out, const char *prefix, const result_doc *d, const char *const *hosts, int n,
                 const hosts_verdict *v);

#ifdef __cplusplus
}
#endif
#endif
