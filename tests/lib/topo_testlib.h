/* topo_testlib.h: what the topology tests share: loading a fixture into a topo_node, comparing a matrix
 * with the expected one written down in the test, and a fake NVML (an nvml_api table whose answers the test
 * sets per GPU: links up, where they lead, PCIe generation; the burn-in counters, queries that answer
 * NOT_SUPPORTED, and a script of changes over the test's time with Xid events among them). Test code only:
 * static inline functions, one copy per test program. */
#ifndef DDPBENCH_TESTS_TOPO_TESTLIB_H
#define DDPBENCH_TESTS_TOPO_TESTLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "topo.h"

/* ---- fixtures ---- */

/* The node of fixture `file` in directory `dir`, or NULL (the failure is counted). Free with free(). */
static inline topo_node *fixture_node(const char *dir, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  hwloc_topology_t topo = NULL;
  ddp_result r = topo_load(path, &topo);
  CHECK(r == DDP_OK, "topo_load(%s) = %s", path, ddp_result_str(r));
  if (r != DDP_OK) return NULL;
  topo_node *n = calloc(1, sizeof *n);
  CHECK(n != NULL, "out of memory");
  if (n) {
    r = topo_node_scan(topo, file, n);
    CHECK(r == DDP_OK, "topo_node_scan(%s) = %s", file, ddp_result_str(r));
  }
  hwloc_topology_destroy(topo);
  return n;
}

/* Compares the GPU x GPU cells (topo_cell) with rows of space-separated expected cells; one CHECK per cell. */
static inline void matrix_expect(const topo_node *n, int pcie_only, const char *const *rows, int nrows,
                                 const char *what) {
  CHECK(n->ngpu == nrows, "%s: %d GPUs, expected %d", what, n->ngpu, nrows);
  for (int a = 0; a < nrows && a < n->ngpu; a++) {
    char row[1024], cell[16];
    snprintf(row, sizeof row, "%s", rows[a]);
    char *save = NULL, *tok = strtok_r(row, " ", &save);
    for (int b = 0; b < n->ngpu; b++, tok = strtok_r(NULL, " ", &save)) {
      const char *got = topo_cell(n, a, b, pcie_only, cell, sizeof cell);
      CHECK(tok && !strcmp(got, tok), "%s: GPU%d-GPU%d is %s, expected %s", what, a, b, got, tok ? tok : "(none)");
    }
  }
}

/* Compares the GPU x NIC classes with expected rows. */
static inline void nic_matrix_expect(const topo_node *n, const char *const *rows, int nrows, const char *what) {
  for (int a = 0; a < nrows && a < n->ngpu; a++) {
    char row[512];
    snprintf(row, sizeof row, "%s", rows[a]);
    char *save = NULL, *tok = strtok_r(row, " ", &save);
    for (int i = 0; i < n->nnic; i++, tok = strtok_r(NULL, " ", &save)) {
      const char *got = topo_class_str((topo_class)n->nic_pcie[a][i]);
      CHECK(tok && !strcmp(got, tok), "%s: GPU%d-NIC%d is %s, expected %s", what, a, i, got, tok ? tok : "(none)");
    }
  }
}

/* Everything topo_node_print writes, as a string the caller frees. */
static inline char *node_text(const topo_node *n, int pcie_only) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return strdup("");
  topo_node_print(n, pcie_only, f);
  fclose(f);
  return buf;
}

/* ---- a fake NVML ---- */

typedef struct {
  const char *busid; /* as NVML spells it: "00000000:00:06.0" */
  const char *name, *uuid;
  int links;              /* link indices that answer; past them: end_code */
  nvml_return end_code;   /* INVALID_ARGUMENT (default) or NOT_SUPPORTED */
  nvml_return state_code; /* non-zero: every state query fails with it */
  unsigned long long up;  /* bit l: link l active */
  unsigned remote_type[NVML_DL_MAX_LINKS];
  const char *remote_busid[NVML_DL_MAX_LINKS];
  unsigned version; /* NVML NVLink version enum */
  unsigned gen, gen_max, width, width_max;
  int compute_mode; /* 2 = prohibited */
  unsigned mig;     /* MIG mode, current */
  unsigned sm_mhz, power_mw, power_limit_mw, temp_c;
  unsigned long long reasons;
  unsigned long long ecc[2][2]; /* [corrected, uncorrected][volatile, aggregate] */
  int no_ecc;                   /* ECC queries answer NOT_SUPPORTED */
  unsigned rows[4];             /* remapped rows: corrected, uncorrected, pending, failure */
  /* burn-in counters (nvml_counters.h) */
  unsigned replay, retired_pending, gen_gpu_max;
  unsigned long long link_err[NVML_DL_MAX_LINKS][4]; /* NVML_CTR_NVLINK_DL_* per link */
  unsigned long long viol_ns[6];                     /* per NVML_CTR_VIOL_* */
  unsigned unsupported;                              /* FAKE_NS_* bits: those queries answer NOT_SUPPORTED */
  int no_events;                                     /* nvmlDeviceRegisterEvents answers NOT_SUPPORTED */
} fake_gpu;

enum {
  FAKE_NS_PCIE_GEN = 1 << 0, /* the current generation */
  FAKE_NS_PCIE_WIDTH = 1 << 1,
  FAKE_NS_PCIE_MAX = 1 << 2, /* both maxima */
  FAKE_NS_REPLAY = 1 << 3,
  FAKE_NS_NVLINK_ERR = 1 << 4,
  FAKE_NS_VIOLATION = 1 << 5,
  FAKE_NS_ROWS = 1 << 6,
  FAKE_NS_RETIRED = 1 << 7,
};

static fake_gpu fake_gpus[4];
static int fake_ngpus;

static inline fake_gpu *fake_of(nvml_device d) { return &fake_gpus[(uintptr_t)d - 1]; }

static inline nvml_return fake_handle(const char *busid, nvml_device *dev) {
  char want[20], have[20];
  if (nvml_busid_normalize(busid, want, sizeof want)) return NVML_DL_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < fake_ngpus; i++)
    if (!nvml_busid_normalize(fake_gpus[i].busid, have, sizeof have) && !strcmp(want, have)) {
      *dev = (nvml_device)(uintptr_t)(i + 1);
      return NVML_DL_SUCCESS;
    }
  return NVML_DL_ERROR_NOT_FOUND;
}
static inline nvml_return fake_name(nvml_device d, char *s, unsigned n) {
  return snprintf(s, n, "%s", fake_of(d)->name), 0;
}
static inline nvml_return fake_uuid(nvml_device d, char *s, unsigned n) {
  return snprintf(s, n, "%s", fake_of(d)->uuid), 0;
}
static inline nvml_return fake_cc(nvml_device d, int *major, int *minor) { return *major = 9, *minor = 0, 0; }
static inline nvml_return fake_mem(nvml_device d, nvml_memory *m) {
  m->total = 143771ull << 20;
  m->free = m->used = 0;
  return 0;
}
static inline nvml_return fake_gen(nvml_device d, unsigned *v) {
  if (fake_of(d)->unsupported & FAKE_NS_PCIE_GEN) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->gen, 0;
}
static inline nvml_return fake_gen_max(nvml_device d, unsigned *v) {
  if (fake_of(d)->unsupported & FAKE_NS_PCIE_MAX) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->gen_max, 0;
}
static inline nvml_return fake_width(nvml_device d, unsigned *v) {
  if (fake_of(d)->unsupported & FAKE_NS_PCIE_WIDTH) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->width, 0;
}
static inline nvml_return fake_width_max(nvml_device d, unsigned *v) {
  if (fake_of(d)->unsupported & FAKE_NS_PCIE_MAX) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->width_max, 0;
}
static inline nvml_return fake_state(nvml_device d, unsigned link, unsigned *active) {
  fake_gpu *g = fake_of(d);
  if (g->state_code) return g->state_code;
  if ((int)link >= g->links) return g->end_code ? g->end_code : NVML_DL_ERROR_INVALID_ARGUMENT;
  *active = (g->up >> link) & 1 ? NVML_DL_LINK_ENABLED : NVML_DL_LINK_DISABLED;
  return 0;
}
static inline nvml_return fake_version(nvml_device d, unsigned link, unsigned *v) {
  return *v = fake_of(d)->version, 0;
}
static inline nvml_return fake_remote_pci(nvml_device d, unsigned link, nvml_pci_info *pci) {
  memset(pci, 0, sizeof *pci);
  snprintf(pci->bus_id, sizeof pci->bus_id, "%s", fake_of(d)->remote_busid[link]);
  return 0;
}
static inline nvml_return fake_remote_type(nvml_device d, unsigned link, unsigned *t) {
  return *t = fake_of(d)->remote_type[link], 0;
}
static inline nvml_return fake_driver(char *s, unsigned n) { return snprintf(s, n, "580.159.04"), 0; }
static inline nvml_return fake_cuda(int *v) { return *v = 13000, 0; }
static inline const char *fake_error(nvml_return r) {
  return r == NVML_DL_ERROR_NOT_FOUND ? "Not Found" : "fake NVML error";
}

static inline nvml_return fake_count(unsigned *n) { return *n = (unsigned)fake_ngpus, 0; }
static inline nvml_return fake_by_index(unsigned i, nvml_device *dev) {
  if ((int)i >= fake_ngpus) return NVML_DL_ERROR_INVALID_ARGUMENT;
  *dev = (nvml_device)(uintptr_t)(i + 1);
  return 0;
}
static inline nvml_return fake_compute_mode(nvml_device d, int *m) { return *m = fake_of(d)->compute_mode, 0; }
static inline nvml_return fake_mig(nvml_device d, unsigned *cur, unsigned *pend) {
  return *cur = *pend = fake_of(d)->mig, 0;
}
static inline nvml_return fake_clock(nvml_device d, int type, unsigned *v) { return *v = fake_of(d)->sm_mhz, 0; }
static inline nvml_return fake_power(nvml_device d, unsigned *v) { return *v = fake_of(d)->power_mw, 0; }
static inline nvml_return fake_power_limit(nvml_device d, unsigned *v) { return *v = fake_of(d)->power_limit_mw, 0; }
static inline nvml_return fake_temp(nvml_device d, int sensor, unsigned *v) { return *v = fake_of(d)->temp_c, 0; }
static inline nvml_return fake_reasons(nvml_device d, unsigned long long *v) { return *v = fake_of(d)->reasons, 0; }
static inline nvml_return fake_ecc(nvml_device d, int type, int counter, unsigned long long *v) {
  if (fake_of(d)->no_ecc) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->ecc[type][counter], 0;
}
static inline nvml_return fake_rows(nvml_device d, unsigned *c, unsigned *u, unsigned *p, unsigned *f) {
  if (fake_of(d)->unsupported & FAKE_NS_ROWS) return NVML_DL_ERROR_NOT_SUPPORTED;
  const unsigned *r = fake_of(d)->rows;
  return *c = r[0], *u = r[1], *p = r[2], *f = r[3], 0;
}
static inline nvml_return fake_gen_gpu_max(nvml_device d, unsigned *v) {
  if (fake_of(d)->unsupported & FAKE_NS_PCIE_MAX) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->gen_gpu_max, 0;
}
static inline nvml_return fake_replay(nvml_device d, unsigned *v) {
  if (fake_of(d)->unsupported & FAKE_NS_REPLAY) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->replay, 0;
}
static inline nvml_return fake_retired(nvml_device d, unsigned *v) {
  if (fake_of(d)->unsupported & FAKE_NS_RETIRED) return NVML_DL_ERROR_NOT_SUPPORTED;
  return *v = fake_of(d)->retired_pending, 0;
}
static inline nvml_return fake_nvlink_err(nvml_device d, unsigned link, int counter, unsigned long long *v) {
  fake_gpu *g = fake_of(d);
  if (g->unsupported & FAKE_NS_NVLINK_ERR) return NVML_DL_ERROR_NOT_SUPPORTED;
  if ((int)link >= g->links || counter < 0 || counter > 3) return NVML_DL_ERROR_INVALID_ARGUMENT;
  return *v = g->link_err[link][counter], 0;
}
static inline nvml_return fake_violation(nvml_device d, int policy, nvml_violation_time *t) {
  if (fake_of(d)->unsupported & FAKE_NS_VIOLATION) return NVML_DL_ERROR_NOT_SUPPORTED;
  if (policy < 0 || policy > 5) return NVML_DL_ERROR_INVALID_ARGUMENT;
  t->reference_us = 0;
  t->violation_ns = fake_of(d)->viol_ns[policy];
  return 0;
}

/* ---- the fake's time: a script of changes, Xid events among them ---- */

typedef enum {
  FAKE_SET_ECC_CORR, /* volatile corrected total */
  FAKE_SET_ECC_UNC,
  FAKE_SET_REPLAY,
  FAKE_SET_GEN, /* current PCIe generation */
  FAKE_SET_WIDTH,
  FAKE_SET_LINK_UP,  /* link `link` active (value 1) or not (0) */
  FAKE_SET_LINK_ERR, /* link `link`, counter `counter` */
  FAKE_SET_ROWS_PENDING,
  FAKE_SET_RETIRED_PENDING,
  FAKE_SET_REASONS,
  FAKE_SET_VIOLATION, /* policy `counter` */
  FAKE_SET_TEMP,
  FAKE_XID, /* an Xid event `value` on GPU `gpu`, delivered by the next poll */
} fake_what;

typedef struct {
  int at; /* the fake's time at which it happens */
  int gpu;
  fake_what what;
  int link, counter;
  unsigned long long value;
} fake_step;

static const fake_step *fake_script;
static int fake_nsteps, fake_applied;
/* Event sets as NVML keeps them: each its own registrations and its own queue, so that two watches (two ranks'
 * probes in one test) each see only the Xids of the GPUs registered in it, from their registration on. */
enum { FAKE_MAX_SETS = 4 };
static struct {
  int open;
  unsigned registered; /* bit g: GPU g registered in this set */
  struct {
    int gpu;
    unsigned long long xid;
  } q[32];
  int nq, read;
} fake_sets[FAKE_MAX_SETS];
static int fake_nsets;               /* sets created since fake_script_set */
static unsigned fake_xid_registered; /* bit g: GPU g registered in some event set */
static int fake_sets_open;
static nvml_return fake_wait_code; /* non-zero: the event wait fails with it */

/* Starts a script (steps in the order of `at`); the fake's time is before the first step. */
static inline void fake_script_set(const fake_step *steps, int n) {
  fake_script = steps, fake_nsteps = n, fake_applied = 0;
  memset(fake_sets, 0, sizeof fake_sets);
  fake_nsets = 0;
  fake_xid_registered = 0, fake_sets_open = 0, fake_wait_code = 0;
}

/* Moves the fake's time to t: every step with at <= t not yet applied takes effect. */
static inline void fake_time(int t) {
  for (; fake_applied < fake_nsteps && fake_script[fake_applied].at <= t; fake_applied++) {
    const fake_step *s = &fake_script[fake_applied];
    fake_gpu *g = &fake_gpus[s->gpu];
    switch (s->what) {
      case FAKE_SET_ECC_CORR: g->ecc[0][0] = s->value; break;
      case FAKE_SET_ECC_UNC: g->ecc[1][0] = s->value; break;
      case FAKE_SET_REPLAY: g->replay = (unsigned)s->value; break;
      case FAKE_SET_GEN: g->gen = (unsigned)s->value; break;
      case FAKE_SET_WIDTH: g->width = (unsigned)s->value; break;
      case FAKE_SET_LINK_UP:
        g->up = s->value ? g->up | (1ull << s->link) : g->up & ~(1ull << s->link);
        break;
      case FAKE_SET_LINK_ERR: g->link_err[s->link][s->counter] = s->value; break;
      case FAKE_SET_ROWS_PENDING: g->rows[2] = (unsigned)s->value; break;
      case FAKE_SET_RETIRED_PENDING: g->retired_pending = (unsigned)s->value; break;
      case FAKE_SET_REASONS: g->reasons = s->value; break;
      case FAKE_SET_VIOLATION: g->viol_ns[s->counter] = s->value; break;
      case FAKE_SET_TEMP: g->temp_c = (unsigned)s->value; break;
      case FAKE_XID: /* NVML records an event only in the sets that registered the device by then */
        for (int e = 0; e < fake_nsets; e++)
          if (fake_sets[e].open && (fake_sets[e].registered >> s->gpu) & 1 && fake_sets[e].nq < 32)
            fake_sets[e].q[fake_sets[e].nq].gpu = s->gpu, fake_sets[e].q[fake_sets[e].nq++].xid = s->value;
        break;
    }
  }
}

/* Set e's handle is 0x5e70 + e; -1 for a handle the fake did not create or has freed. */
static inline int fake_set_of(nvml_event_set set) {
  uintptr_t e = (uintptr_t)set - 0x5e70;
  return (uintptr_t)set >= 0x5e70 && e < (uintptr_t)fake_nsets && fake_sets[e].open ? (int)e : -1;
}
static inline nvml_return fake_set_create(nvml_event_set *set) {
  if (fake_nsets == FAKE_MAX_SETS) return NVML_DL_ERROR_UNKNOWN;
  fake_sets[fake_nsets].open = 1;
  *set = (nvml_event_set)(uintptr_t)(0x5e70 + fake_nsets++);
  fake_sets_open++;
  return 0;
}
static inline nvml_return fake_register(nvml_device d, unsigned long long types, nvml_event_set set) {
  int e = fake_set_of(set);
  if (e < 0) return NVML_DL_ERROR_INVALID_ARGUMENT;
  if (fake_of(d)->no_events) return NVML_DL_ERROR_NOT_SUPPORTED;
  if (types & 0x8ull) {
    fake_sets[e].registered |= 1u << ((uintptr_t)d - 1);
    fake_xid_registered |= 1u << ((uintptr_t)d - 1);
  }
  return 0;
}
static inline nvml_return fake_wait(nvml_event_set set, nvml_event_data *ed, unsigned timeout_ms) {
  (void)timeout_ms; /* the fake never sleeps: ready events or TIMEOUT */
  int e = fake_set_of(set);
  if (e < 0) return NVML_DL_ERROR_INVALID_ARGUMENT;
  if (fake_wait_code) return fake_wait_code;
  if (fake_sets[e].read == fake_sets[e].nq) return NVML_DL_ERROR_TIMEOUT;
  memset(ed, 0, sizeof *ed);
  ed->device = (nvml_device)(uintptr_t)(fake_sets[e].q[fake_sets[e].read].gpu + 1);
  ed->event_type = 0x8ull; /* nvmlEventTypeXidCriticalError */
  ed->event_data = fake_sets[e].q[fake_sets[e].read++].xid;
  ed->gpu_instance_id = ed->compute_instance_id = 0xFFFFFFFFu;
  return 0;
}
static inline nvml_return fake_set_free(nvml_event_set set) {
  int e = fake_set_of(set);
  if (e < 0) return NVML_DL_ERROR_INVALID_ARGUMENT;
  fake_sets[e].open = 0;
  fake_sets_open--;
  return 0;
}

static inline nvml_api fake_api(void) {
  nvml_api a;
  memset(&a, 0, sizeof a);
  a.error_string = fake_error;
  a.system_driver_version = fake_driver;
  a.system_cuda_driver_version = fake_cuda;
  a.handle_by_busid = fake_handle;
  a.name = fake_name;
  a.uuid = fake_uuid;
  a.compute_capability = fake_cc;
  a.memory_info = fake_mem;
  a.pcie_gen = fake_gen;
  a.pcie_gen_max = fake_gen_max;
  a.pcie_width = fake_width;
  a.pcie_width_max = fake_width_max;
  a.nvlink_state = fake_state;
  a.nvlink_version = fake_version;
  a.nvlink_remote_pci = fake_remote_pci;
  a.nvlink_remote_type = fake_remote_type;
  a.device_count = fake_count;
  a.handle_by_index = fake_by_index;
  a.compute_mode = fake_compute_mode;
  a.mig_mode = fake_mig;
  a.clock = fake_clock;
  a.power_usage = fake_power;
  a.power_limit = fake_power_limit;
  a.temperature = fake_temp;
  a.clocks_event_reasons = fake_reasons;
  a.ecc_total = fake_ecc;
  a.remapped_rows = fake_rows;
  a.pcie_gen_gpu_max = fake_gen_gpu_max;
  a.pcie_replay = fake_replay;
  a.retired_pending = fake_retired;
  a.nvlink_error_counter = fake_nvlink_err;
  a.violation_status = fake_violation;
  a.event_set_create = fake_set_create;
  a.register_events = fake_register;
  a.event_set_wait = fake_wait;
  a.event_set_free = fake_set_free;
  return a;
}

/* An H200 of the project's GPU machine: 18 NVLink 4 links, all up, to an NVSwitch the VM hides, Gen5 x16. */
static inline fake_gpu fake_h200(const char *busid, const char *uuid) {
  fake_gpu g;
  memset(&g, 0, sizeof g);
  g.busid = busid;
  g.name = "NVIDIA H200";
  g.uuid = uuid;
  g.links = 18;
  g.up = (1ull << 18) - 1;
  for (int l = 0; l < NVML_DL_MAX_LINKS; l++) {
    g.remote_type[l] = NVML_DL_REMOTE_SWITCH;
    g.remote_busid[l] = "FFFFFFFF:FF:FF.0";
  }
  g.version = 6;
  g.gen = g.gen_max = g.gen_gpu_max = 5;
  g.width = g.width_max = 16;
  return g;
}

#define H200_UUID0 "GPU-d8b6abde-1111-2222-3333-444455556666"
#define H200_UUID1 "GPU-0f1e2d3c-7777-8888-9999-aaaabbbbcccc"

/* The 2 x H200 fixture with the fake NVML answering for both GPUs as set in fake_gpus[0..1]. */
static inline topo_node *h200_node(const char *dir) {
  topo_node *n = fixture_node(dir, "h200x2-vm.hwloc.xml");
  if (!n) return NULL;
  nvml_api api = fake_api();
  fake_ngpus = 2;
  topo_node_query_nvml(n, &api, NULL, -1);
  return n;
}

static inline void fake_h200_pair(void) {
  fake_gpus[0] = fake_h200("00000000:00:06.0", H200_UUID0);
  fake_gpus[1] = fake_h200("00000000:00:07.0", H200_UUID1);
  fake_ngpus = 2;
}

#endif
