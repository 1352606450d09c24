/* nccl_section.h: NCCL's account of every rank as the result's "nccl" section, the report's block and the
 * checks' findings (nccl_section.c). For the skeleton (cmd.c), after a subcommand's run().
 *
 * defines: nccl_section_collect */
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

#ifdef __cplusplus
}
#endif
#endif
