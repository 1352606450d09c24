/* phase.c: the phases' names and the freeing of what one rank measured in one (phase.h). */
#include "phase.h"

#include <stdlib.h>
#include <string.h>

const char *phase_name(ddp_phase p) {
  static const char *n[] = {PHASE_NAME_LOCAL, PHASE_NAME_COMM, PHASE_NAME_DDP, PHASE_NAME_FSDP};
  return (unsigned)p < PHASE_COUNT ? n[p] : "?";
}

const char *strategy_name(ddp_strategy s) { return s == STRATEGY_FSDP ? "fsdp" : "ddp"; }

ddp_phase phase_train(ddp_strategy s) { return s == STRATEGY_FSDP ? PHASE_FSDP : PHASE_DDP; }

void phase_result_free(phase_result *r) {
  free(r->step_ms);
  free(r->compute_ms);
  free(r->bucket_ms);
  free(r->loss);
  free(r->scale);
  free(r->skipped);
  memset(r, 0, sizeof *r);
}
