/* nccl_account.c: the set-up and reading of this process's NCCL log (nccl_account.h). One static state, used
 * from the thread that makes NCCL calls only. The file is read through a descriptor (pread from offset 0), so
 * NCCL's own FILE* and ours never share a position. */
#include "nccl_account.h"
#include "common.h"
#include "nccl_prof.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPANS_MAX 512
#define LOG_MAX ((size_t)64 << 20) /* a set-up log beyond this is read up to here, and says it is truncated */

static struct {
  int setup;
  int private_log;       /* 1: our file (unlinked once NCCL opened it); 0: the user's, or none */
  char path[PATH_MAX];   /* the file (expanded as NCCL expands %h and %p); "" none */
  char dir[PATH_MAX - 32]; /* our private directory, until removed */
  int fd;                /* read descriptor, -1 until opened */
  char why[400];         /* why nothing can be read ("" when the log can be) */
  int ncomms;
  unsigned long long comm[NCCL_ACC_MAX_COMMS];
  char label[NCCL_ACC_MAX_COMMS][32];
  int nspans;
  nccl_log_span span[SPANS_MAX];
  /* NCCL's choices per collective, from the profiler plugin (nccl_prof.h), kept across takes */
  int prof;              /* 1: the plugin is set up */
  int prof_on;           /* recording now */
  int prof_taken;        /* a take succeeded: "algorithms" is an answer (possibly empty) */
  char prof_why[300];    /* why the choices are not reported */
  long prof_dropped;
  int nrec;
  ddpbench_prof_record rec[DDPBENCH_PROF_MAX_RECORDS];
} g = {.fd = -1};

/* NCCL_DEBUG_FILE's expansion as NCCL does it: %h the host name up to its first '.', %p the pid, %% a '%',
 * anything else kept. */
static void expand(const char *in, char *out, size_t n) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  char *dot = strchr(host, '.');
  if (dot) *dot = 0;
  size_t o = 0;
  for (const char *p = in; *p && o + 1 < n; p++) {
    char add[300];
    if (*p != '%' || !p[1]) {
      add[0] = *p, add[1] = 0;
    } else {
      p++;
      if (*p == 'h') snprintf(add, sizeof add, "%s", host);
      else if (*p == 'p') snprintf(add, sizeof add, "%d", (int)getpid());
      else if (*p == '%') snprintf(add, sizeof add, "%%");
      else snprintf(add, sizeof add, "%%%c", *p);
    }
    size_t k = strlen(add);
    if (o + k >= n) break;
    memcpy(out + o, add, k);
    o += k;
  }
  out[o] = 0;
}

void nccl_account_setup(void) {
  if (g.setup) return;
  g.setup = 1;
  g.prof = nccl_prof_setup_env(NULL, g.prof_why, sizeof g.prof_why) == 1;
  const char *level = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
  if (file && *file) { /* the user's file: read it, whatever else they set */
    expand(file, g.path, sizeof g.path);
    if (!level || !*level) {
      ddp_setenv_own("NCCL_DEBUG", "INFO");
      if (!getenv("NCCL_DEBUG_SUBSYS")) ddp_setenv_own("NCCL_DEBUG_SUBSYS", "INIT,GRAPH,TRANSPORT,NET");
    } else if (strcasecmp(level, "INFO") && strcasecmp(level, "TRACE")) {
      snprintf(g.why, sizeof g.why, "NCCL_DEBUG=%.64s is set: NCCL logs no set-up (INFO) lines to read", level);
    }
    return;
  }
  if (level && *level) {
    snprintf(g.why, sizeof g.why,
             "NCCL_DEBUG=%.64s is set without NCCL_DEBUG_FILE: NCCL's log goes to standard output, which ddpbench "
             "does not read (set NCCL_DEBUG_FILE to have it read)", level);
    return;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(g.dir, sizeof g.dir, "%s/ddpbench-nccl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g.dir)) {
    snprintf(g.why, sizeof g.why, "cannot make a private directory for NCCL's log in %s: %s", tmp && *tmp ? tmp : "/tmp",
             strerror(errno));
    g.dir[0] = 0;
    return;
  }
  snprintf(g.path, sizeof g.path, "%s/nccl.log", g.dir);
  g.private_log = 1;
  ddp_setenv_own("NCCL_DEBUG", "INFO");
  if (!getenv("NCCL_DEBUG_SUBSYS")) ddp_setenv_own("NCCL_DEBUG_SUBSYS", "INIT,GRAPH,TRANSPORT,NET");
  ddp_setenv_own("NCCL_DEBUG_FILE", g.path);
}

/* Opens the file once NCCL made it; our private one is then unlinked with its directory. */
static void open_log(void) {
  if (g.fd >= 0 || !g.path[0]) return;
  g.fd = open(g.path, O_RDONLY | O_CLOEXEC);
  if (g.fd < 0 || !g.private_log) return;
  unlink(g.path);
  if (g.dir[0]) rmdir(g.dir);
  g.dir[0] = 0;
}

int nccl_account_active(void) { return g.ncomms > 0; }

size_t nccl_account_offset(void) {
  open_log();
  struct stat st;
  if (g.fd < 0 || fstat(g.fd, &st) != 0) return 0;
  return (size_t)st.st_size;
}

void nccl_account_span(unsigned long long comm, size_t begin) {
  size_t end = nccl_account_offset();
  if (end <= begin || g.nspans >= SPANS_MAX) return;
  g.span[g.nspans++] = (nccl_log_span){begin, end, comm};
}

void nccl_account_comm(unsigned long long comm, const char *label, size_t begin) {
  if (g.ncomms < NCCL_ACC_MAX_COMMS) {
    g.comm[g.ncomms] = comm;
    snprintf(g.label[g.ncomms], sizeof g.label[0], "%s", label ? label : "");
    g.ncomms++;
  }
  nccl_account_span(comm, begin);
}

/* Adds a take's records to the kept ones (same key: calls add up). */
static void keep(const ddpbench_prof_record *r, int n) {
  for (int i = 0; i < n; i++) {
    int k = 0;
    for (; k < g.nrec; k++) {
      const ddpbench_prof_record *q = &g.rec[k];
      if (q->comm_hash == r[i].comm_hash && q->rank == r[i].rank && q->bytes == r[i].bytes && q->channels == r[i].channels &&
          !strcmp(q->coll, r[i].coll) && !strcmp(q->algo, r[i].algo) && !strcmp(q->proto, r[i].proto) &&
          !strcmp(q->datatype, r[i].datatype))
        break;
    }
    if (k < g.nrec) g.rec[k].calls += r[i].calls;
    else if (g.nrec < DDPBENCH_PROF_MAX_RECORDS) g.rec[g.nrec++] = r[i];
    else g.prof_dropped += r[i].calls;
  }
}

void nccl_account_choices(int on) {
  if (!g.prof || !g.ncomms || on == g.prof_on) return;
  char why[300] = "";
  if (on) {
    if (nccl_prof_enable(1, why, sizeof why) == 0) g.prof_on = 1;
    else snprintf(g.prof_why, sizeof g.prof_why, "%s", why);
    return;
  }
  nccl_prof_enable(0, why, sizeof why);
  g.prof_on = 0;
  static ddpbench_prof_record got[DDPBENCH_PROF_MAX_RECORDS];
  long dropped = 0;
  int n = nccl_prof_take(got, DDPBENCH_PROF_MAX_RECORDS, &dropped, why, sizeof why);
  if (n < 0) {
    snprintf(g.prof_why, sizeof g.prof_why, "%s", why);
    return;
  }
  g.prof_taken = 1;
  g.prof_dropped += dropped;
  keep(got, n);
}

/* The kept choices into the communicators they belong to: by commHash (NCCL prints it as a world
 * communicator's commId); a split communicator prints none, so a record goes to the one communicator without
 * a commId of its size, when there is exactly one. nccl-tests' size: x nranks for AllGather, ReduceScatter. */
static void choices_into(nccl_account *acc) {
  for (int i = 0; i < acc->ncomms; i++) acc->comms[i].nalgos = g.prof_taken ? 0 : -1;
  if (!g.prof_taken) return;
  for (int k = 0; k < g.nrec; k++) {
    const ddpbench_prof_record *r = &g.rec[k];
    nccl_acc_comm *to = NULL;
    int unnamed = 0;
    for (int i = 0; i < acc->ncomms && !to; i++) {
      nccl_acc_comm *c = &acc->comms[i];
      if (c->comm_id[0] && strtoull(c->comm_id, NULL, 16) == r->comm_hash) to = c;
    }
    for (int i = 0; i < acc->ncomms && !to; i++)
      if (!acc->comms[i].comm_id[0] && acc->comms[i].nranks == r->nranks) unnamed++;
    for (int i = 0; i < acc->ncomms && !to && unnamed == 1; i++)
      if (!acc->comms[i].comm_id[0] && acc->comms[i].nranks == r->nranks) to = &acc->comms[i];
    if (!to || to->nalgos >= NCCL_ACC_MAX_ALGOS) continue;
    nccl_acc_algo *a = &to->algo[to->nalgos++];
    memset(a, 0, sizeof *a);
    snprintf(a->coll, sizeof a->coll, "%s", r->coll);
    int whole = !strcmp(r->coll, "AllGather") || !strcmp(r->coll, "ReduceScatter");
    a->bytes = (double)r->bytes * (whole && r->nranks > 0 ? r->nranks : 1);
    snprintf(a->algo, sizeof a->algo, "%s", r->algo);
    snprintf(a->proto, sizeof a->proto, "%s", r->proto);
    a->channels = r->channels;
    a->calls = r->calls;
  }
}

const char *nccl_account_choices_why(void) {
  if (g.prof_taken) return NULL;
  return g.prof_why[0] ? g.prof_why
                       : "NCCL's choices are recorded only around untimed calls (doctor's probe, collectives' "
                         "warm-up, one allreduce a bucket size after a run's phases), and none was made";
}

const char *nccl_account_source(void) { return g.private_log ? "ddpbench" : "user"; }

int nccl_account_read(nccl_account *acc, char *why, size_t n) {
  memset(acc, 0, sizeof *acc);
  if (!g.ncomms) {
    snprintf(why, n, "this process made no NCCL communicator");
    return -1;
  }
  if (g.why[0]) {
    snprintf(why, n, "%s", g.why);
    return -1;
  }
  open_log();
  struct stat st;
  if (g.fd < 0 || fstat(g.fd, &st) != 0) {
    snprintf(why, n, "NCCL wrote no log file (%s)", g.private_log ? "its private file" : g.path);
    return -1;
  }
  size_t len = (size_t)st.st_size < LOG_MAX ? (size_t)st.st_size : LOG_MAX;
  char *text = malloc(len ? len : 1);
  if (!text) {
    snprintf(why, n, "out of host memory reading NCCL's log (%zu bytes)", len);
    return -1;
  }
  size_t got = 0;
  while (got < len) {
    ssize_t k = pread(g.fd, text + got, len - got, (off_t)got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
  }
  for (int i = 0; i < g.ncomms && i < NCCL_ACC_MAX_COMMS; i++) { /* the parser keeps the labels of these */
    acc->comms[i].comm = g.comm[i];
    snprintf(acc->comms[i].label, sizeof acc->comms[i].label, "%s", g.label[i]);
  }
  acc->ncomms = g.ncomms;
  nccl_log_parse(text, got, g.span, g.nspans, acc);
  free(text);
  if ((size_t)st.st_size > LOG_MAX) acc->truncated = 1;
  choices_into(acc);
  if (!acc->nccl_lines) {
    snprintf(why, n, "NCCL's log holds no NCCL lines (%zu bytes read)", got);
    return -1;
  }
  return 0;
}
