/* nccl_section.h: NCCL's account of every rank as the result's "nccl" section, the report's block and the
 * checks' findings (nccl_section.c). For the skeleton (cmd.c), after a subcommand's run().
 *
 * defines: nccl_section_collect, nccl_section_print */
#ifndef DDPBENCH_NCCL_SECTION_H
#define DDPBENCH_NCCL_SECTION_H

#include "cmd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every rank (collective over the world). When any rank made a NCCL communicator: rank 0 adds "nccl" to
 * c->sections ({reported, why, source, ranks: [{rank, host, account | null, why}]}), prints its block
 * (unless quiet), and appends the checks' findings to c->doc.findings; a failing one raises c->exit_code
 * from 0 to 4 (DDP_EXIT_EXPECT), as every failed acceptance check does (doctor: to 1, its "degraded"). Errors: MPI, out of memory. */
ddp_result nccl_section_collect(cmd_ctx *c);
/* The report's block from a "nccl" section: the version and network, then per communicator label its ranks,
 * channels and the transports of its peers counted over ranks, and NCCL's choices per collective, sizes with
 * the same choice as one range ("AllReduce 8 B-32 KiB LL/RING 2 ch, ..."), or why they are not reported. */
void nccl_section_print(FILE *out, const cJSON *sec);

#ifdef __cplusplus
}
#endif
#endif
