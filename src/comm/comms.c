/* comms.c: the table of comms. One line per transport; NCCL exists only in a CUDA build. */
#include "comm.h"

#include <string.h>

static const comm_entry BUILTIN[] = {
    {"mpi", NULL, comm_mpi_create, NULL},
#ifdef DDPBENCH_HAVE_CUDA
    {"nccl", "cuda", comm_nccl_create, comm_nccl_versions},
#endif
};
enum { NBUILTIN = sizeof BUILTIN / sizeof BUILTIN[0], MAX_EXTRA = 4 };
static const comm_entry *extra[MAX_EXTRA];
static int nextra;

const comm_entry *comm_at(int i) {
  if (i >= 0 && i < NBUILTIN) return &BUILTIN[i];
  if (i >= NBUILTIN && i < NBUILTIN + nextra) return extra[i - NBUILTIN];
  return NULL;
}

const comm_entry *comm_named(const char *name) {
  const comm_entry *e;
  for (int i = 0; (e = comm_at(i)) != NULL; i++)
    if (strcmp(e->name, name) == 0) return e;
  return NULL;
}

ddp_result comm_register(const comm_entry *e) {
  if (!e || !e->name || !e->create) return ddp_usage_error("comm_register: an entry needs a name and create()");
  if (comm_named(e->name) || !strcmp(e->name, "auto")) return ddp_usage_error("comm '%s' is registered twice", e->name);
  if (nextra == MAX_EXTRA) return ddp_usage_error("more than %d comms registered", MAX_EXTRA);
  extra[nextra++] = e;
  return DDP_OK;
}

const comm_entry *comm_auto(const char *dev) {
  const comm_entry *e, *any = NULL;
  for (int i = 0; (e = comm_at(i)) != NULL; i++) {
    if (dev && e->needs_device && strcmp(e->needs_device, dev) == 0) return e;
    if (!e->needs_device && !any) any = e;
  }
  return any;
}

int comm_choice(int i, const char **name) {
  if (i == 0) return *name = "auto", 0;
  const comm_entry *e = comm_at(i - 1);
  if (!e) return -1;
  *name = e->name;
  return i;
}

const comm_entry *comm_chosen(int value) { return value > 0 ? comm_at(value - 1) : NULL; }

void comms_versions(ddp_versions *v) {
  const comm_entry *e;
  for (int i = 0; (e = comm_at(i)) != NULL; i++)
    if (e->versions) e->versions(v);
}
