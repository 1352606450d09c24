/* nccl_checks.h: NCCL's own account of what it did (the "nccl" section: nccl_account_json per rank) checked
 * against what the machine offers (the "topology" section: topo_cluster_report's object). Pure: JSON in,
 * findings out; no MPI, no NCCL, no files, no printing. JSON, not the structs of comm/nccl_log.h or topo.h,
 * because verdict/ may use only result/ and base/ (docs/ARCHITECTURE.md), and because a saved result file
 * holds both sections as JSON: doctor, run, accept, collectives and a later reader all call the same rules.
 *
 * The rules (check "nccl"; each finding says what was expected and why):
 *   GPUs joined by NVLink on one host talk P2P: SHM, NET or anything else between them FAILS (pair).
 *   A GPU whose NET peers go through an IB/RoCE HCA (OpenFabrics) at PIX or PXB, the reach of
 *     NCCL_NET_GDR_LEVEL's default, gets GPUDirect RDMA: plain NET there WARNS; at PHB or farther it is INFO.
 *   NET over sockets on a host that has an IB/RoCE HCA FAILS: NCCL fell back to sockets (host).
 *   A NET peer's NIC across the NUMA boundary (GPU x NIC class SYS) while a NIC of the same kind nearer than
 *     SYS exists WARNS (rank).
 *   NVLS: NCCL_NVLS_ENABLE=1 asked, NCCL says supported but a communicator of more than one rank a node does not
 *     use it: WARN; NCCL_NVLS_ENABLE=0 and NCCL uses it: FAIL; otherwise INFO (job).
 *   Sockets on hosts without an HCA: the only network there (passed INFO).
 *   What is not reported (no section, reported false, an account or a figure null) is one INFO finding
 *     "NCCL's account not reported: ...", never a pass or a failure. Checks that held are passed INFO findings.
 *
 * defines: nccl_checks */
#ifndef DDPBENCH_NCCL_CHECKS_H
#define DDPBENCH_NCCL_CHECKS_H

#include <cJSON.h>

#include "findings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends the findings of the rules above to l. topology: {"hosts": [{"host", "node": {gpus, nics, gpu_pairs,
 * gpu_nic}}], "ranks": [{"rank", "host" (index), "gpu_index"}], "environment": {"nccl_env_rank0"}}; nccl:
 * {"reported", "why", "source", "ranks": [{"rank", "host", "account"}]}. Either may be NULL (then: the one
 * "not reported" finding). Keys it does not know are ignored, keys it lacks are "not reported"; it never fails
 * on what the JSON holds. Findings name the host (the hosts verdict counts them) and the world rank whose
 * account showed it. Returns DDP_OK, or DDP_ERR_SYSTEM when out of memory (l then holds what was added). */
ddp_result nccl_checks(const cJSON *topology, const cJSON *nccl, finding_list *l);

#ifdef __cplusplus
}
#endif
#endif
