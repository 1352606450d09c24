/* ctx.c: two helpers over a subcommand's context (cmd.h): cmd_versions and cmd_rank_host. Apart from cmd.c so
 * that the sections the skeleton runs (nccl_section.c) can use them without cmd.c and the section needing each
 * other. Nothing here communicates or prints. */
#include "cmd.h"

void cmd_versions(ddp_versions *v) {
  versions_base(v);
  devices_versions(v);
  comms_versions(v);
}

const char *cmd_rank_host(const cmd_ctx *c, int rank) {
  return c->ranks && rank >= 0 && rank < c->dist.size ? c->ranks[rank].host : "";
}
