/* test_nccl_account.c: nccl_account.c without NCCL: the environment it sets or leaves, its private file
 * (unlinked once "NCCL" opened it, read through the kept descriptor), the user's file (expanded, kept), the
 * spans that attribute lines without a comm pointer, and every "not reported" reason. NCCL is played by this
 * test: it opens NCCL_DEBUG_FILE as NCCL does ("w", line-buffered) and writes lines of a log captured on the
 * H200 (argv[1]). Each scenario runs in a child process, since the account's state is one per process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common.h"
#include "nccl_account.h"

static const char *g_log; /* the captured H200 log */

/* "NCCL" opening its debug file as debug.cc does. */
static FILE *nccl_open(void) {
  const char *p = getenv("NCCL_DEBUG_FILE");
  if (!p) return NULL;
  char path[4096];
  /* the test's user paths use %p only */
  const char *pc = strstr(p, "%p");
  if (pc) snprintf(path, sizeof path, "%.*s%d%s", (int)(pc - p), p, (int)getpid(), pc + 2);
  else snprintf(path, sizeof path, "%s", p);
  FILE *f = fopen(path, "w");
  if (f) setvbuf(f, NULL, _IOLBF, 0);
  return f;
}

/* Writes the captured log's lines [from, to) (1-based, to exclusive; 0 = to the end). */
static void write_lines(FILE *f, int from, int to) {
  FILE *in = fopen(g_log, "r");
  char line[8192];
  for (int n = 1; in && fgets(line, sizeof line, in); n++)
    if (n >= from && (!to || n < to)) fputs(line, f);
  if (in) fclose(in);
  fflush(f);
}

static int child_private(void) {
  unsetenv("NCCL_DEBUG"), unsetenv("NCCL_DEBUG_FILE"), unsetenv("NCCL_DEBUG_SUBSYS"), unsetenv("NCCL_PROFILER_PLUGIN");
  setenv("TMPDIR", "/tmp", 1);
  nccl_account_setup();
  const char *lvl = getenv("NCCL_DEBUG"), *sub = getenv("NCCL_DEBUG_SUBSYS"), *file = getenv("NCCL_DEBUG_FILE");
  CHECK(lvl && !strcmp(lvl, "INFO"), "NCCL_DEBUG=%s", lvl ? lvl : "(unset)");
  CHECK(sub && !strcmp(sub, "INIT,GRAPH,TRANSPORT,NET"), "NCCL_DEBUG_SUBSYS=%s", sub ? sub : "(unset)");
  CHECK(file && !strncmp(file, "/tmp/ddpbench-nccl-", 19), "NCCL_DEBUG_FILE=%s", file ? file : "(unset)");
  char path[4096] = "", dir[4096] = "";
  if (file) snprintf(path, sizeof path, "%s", file), snprintf(dir, sizeof dir, "%s", file);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  CHECK(ddp_env_is_own("NCCL_DEBUG") && ddp_env_is_own("NCCL_DEBUG_FILE") && ddp_env_is_own("NCCL_DEBUG_SUBSYS"),
        "ddpbench's own variables are not marked as its own (they would be recorded as the user's)");
  nccl_account_setup(); /* a second call changes nothing */
  CHECK(!strcmp(getenv("NCCL_DEBUG_FILE"), path), "setup twice moved the file");
  nccl_account *acc = calloc(1, sizeof *acc);
  char why[512] = "";
  CHECK(nccl_account_read(acc, why, sizeof why) == -1 && strstr(why, "no NCCL communicator"), "before a comm: %s", why);
  CHECK(!nccl_account_active(), "active before a comm");
  size_t b = nccl_account_offset();
  CHECK(b == 0, "offset %zu before NCCL opened its file", b);
  FILE *f = nccl_open();
  CHECK(f != NULL, "NCCL could not open %s", path);
  if (!f) return check_summary();
  write_lines(f, 1, 0);
  nccl_account_comm(0x55cb4c7566e0ULL, "world", b);
  CHECK(nccl_account_active(), "not active after a comm");
  struct stat st;
  CHECK(stat(path, &st) != 0, "the private file %s is still there once opened", path);
  CHECK(stat(dir, &st) != 0, "the private directory %s is still there", dir);
  CHECK(nccl_account_offset() > 10000, "offset %zu after the whole log", nccl_account_offset());
  CHECK(nccl_account_read(acc, why, sizeof why) == 0, "read: %s", why);
  CHECK(!strcmp(nccl_account_source(), "ddpbench"), "source %s", nccl_account_source());
  CHECK(!strcmp(acc->version, "2.28.3+cuda13.0"), "version '%s'", acc->version);
  nccl_acc_comm *c = nccl_acc_find_comm(acc, 0x55cb4c7566e0ULL);
  CHECK(c && !strcmp(c->label, "world"), "label '%s'", c ? c->label : "(no comm)");
  CHECK(c && c->nranks == 1 && c->coll_channels == 64 && c->init_complete, "comm %d ranks, %d channels",
        c ? c->nranks : -9, c ? c->coll_channels : -9);
  CHECK(c && c->nalgos <= 0, "algorithms without the plugin: %d", c ? c->nalgos : -9);
  CHECK(nccl_account_choices_why() != NULL, "no reason for the missing choices");
  fclose(f);
  free(acc);
  return check_summary();
}

/* Two communicators; the second's lines without a comm pointer sit in a span that names the first. */
static int child_spans(void) {
  unsetenv("NCCL_DEBUG"), unsetenv("NCCL_DEBUG_FILE"), unsetenv("NCCL_DEBUG_SUBSYS");
  nccl_account_setup();
  FILE *f = nccl_open();
  CHECK(f != NULL, "open");
  if (!f) return check_summary();
  size_t b = nccl_account_offset();
  fprintf(f, "vm:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n");
  fprintf(f, "vm:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1000 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId "
             "0xaa - Init START\n");
  fprintf(f, "vm:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1000 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId "
             "0xaa - Init COMPLETE\n");
  nccl_account_comm(0x1000, "world", b);
  b = nccl_account_offset();
  fprintf(f, "vm:1:1 [0] NCCL INFO ncclCommSplit comm 0x2000 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 parent "
             "0x1000 splitCount 1 color 0 key 0- Init START\n");
  fprintf(f, "vm:1:1 [0] NCCL INFO ncclCommSplit comm 0x2000 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 parent "
             "0x1000 splitCount 1 color 0 key 0- Init COMPLETE\n");
  nccl_account_comm(0x2000, "group 0", b);
  /* the world's first allreduce: NCCL connects it now, on the same thread, naming no communicator */
  b = nccl_account_offset();
  fprintf(f, "vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n");
  fprintf(f, "vm:1:1 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n");
  nccl_account_span(0x1000, b);
  /* and a line after every span: the last communicator named on the thread (the split) */
  fprintf(f, "vm:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via SHM/direct/direct\n");
  fflush(f);
  nccl_account *acc = calloc(1, sizeof *acc);
  char why[512] = "";
  CHECK(nccl_account_read(acc, why, sizeof why) == 0, "read: %s", why);
  nccl_acc_comm *w = nccl_acc_find_comm(acc, 0x1000), *g = nccl_acc_find_comm(acc, 0x2000);
  CHECK(w && g, "both communicators");
  if (w && g) {
    CHECK(!strcmp(w->label, "world") && !strcmp(g->label, "group 0"), "labels %s, %s", w->label, g->label);
    CHECK(w->npeers == 1 && !strcmp(w->peer[0].via, "P2P/CUMEM/read"), "world's peers: %d (%s)", w->npeers,
          w->npeers ? w->peer[0].via : "");
    CHECK(g->npeers == 1 && !strcmp(g->peer[0].via, "SHM/direct/direct"), "split's peers: %d (%s)", g->npeers,
          g->npeers ? g->peer[0].via : "");
  }
  fclose(f);
  free(acc);
  return check_summary();
}

static int child_user_level_only(void) {
  unsetenv("NCCL_DEBUG_FILE");
  setenv("NCCL_DEBUG", "WARN", 1);
  unsetenv("NCCL_DEBUG_SUBSYS");
  nccl_account_setup();
  CHECK(!strcmp(getenv("NCCL_DEBUG"), "WARN"), "the user's level changed");
  CHECK(!getenv("NCCL_DEBUG_FILE"), "a file was set against the user's choice");
  CHECK(!getenv("NCCL_DEBUG_SUBSYS"), "subsystems set");
  nccl_account_comm(0x1, "world", 0);
  nccl_account *acc = calloc(1, sizeof *acc);
  char why[512] = "";
  CHECK(nccl_account_read(acc, why, sizeof why) == -1, "read succeeded");
  CHECK(strstr(why, "NCCL_DEBUG=WARN") && strstr(why, "standard output") && strstr(why, "NCCL_DEBUG_FILE"),
        "why: %s", why);
  free(acc);
  return check_summary();
}

static int child_user_file(int with_level) {
  char tmpl[] = "/tmp/test-nccl-account-XXXXXX";
  char *d = mkdtemp(tmpl);
  CHECK(d != NULL, "mkdtemp");
  if (!d) return check_summary();
  char user[4200];
  snprintf(user, sizeof user, "%s/nccl.%%p.log", d);
  setenv("NCCL_DEBUG_FILE", user, 1);
  if (with_level) setenv("NCCL_DEBUG", "INFO", 1), setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
  else unsetenv("NCCL_DEBUG"), unsetenv("NCCL_DEBUG_SUBSYS");
  nccl_account_setup();
  CHECK(!strcmp(getenv("NCCL_DEBUG_FILE"), user), "the user's file was replaced by %s", getenv("NCCL_DEBUG_FILE"));
  CHECK(!ddp_env_is_own("NCCL_DEBUG_FILE"), "the user's NCCL_DEBUG_FILE counted as ddpbench's");
  CHECK(ddp_env_is_own("NCCL_DEBUG") == !with_level, "NCCL_DEBUG's owner");
  CHECK(!strcmp(getenv("NCCL_DEBUG"), "INFO"), "level %s", getenv("NCCL_DEBUG"));
  CHECK(!strcmp(getenv("NCCL_DEBUG_SUBSYS"), with_level ? "INIT" : "INIT,GRAPH,TRANSPORT,NET"), "subsystems %s",
        getenv("NCCL_DEBUG_SUBSYS"));
  FILE *f = nccl_open();
  CHECK(f != NULL, "open the user's file");
  if (!f) return check_summary();
  write_lines(f, 1, 0);
  nccl_account_comm(0x55cb4c7566e0ULL, "world", 0);
  nccl_account *acc = calloc(1, sizeof *acc);
  char why[512] = "";
  CHECK(nccl_account_read(acc, why, sizeof why) == 0, "read: %s", why);
  CHECK(!strcmp(nccl_account_source(), "user"), "source %s", nccl_account_source());
  char real[4300];
  snprintf(real, sizeof real, "%s/nccl.%d.log", d, (int)getpid());
  struct stat st;
  CHECK(stat(real, &st) == 0, "the user's file %s was removed", real);
  CHECK(acc->ncomms == 1 && !strcmp(acc->version, "2.28.3+cuda13.0"), "%d comms, version %s", acc->ncomms, acc->version);
  fclose(f);
  unlink(real);
  rmdir(d);
  free(acc);
  return check_summary();
}

/* "NCCL" never wrote its file (a level without INFO lines, say): not reported, and why. */
static int child_no_file(void) {
  unsetenv("NCCL_DEBUG"), unsetenv("NCCL_DEBUG_FILE"), unsetenv("NCCL_DEBUG_SUBSYS");
  nccl_account_setup();
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", getenv("NCCL_DEBUG_FILE"));
  nccl_account_comm(0x1, "world", 0);
  nccl_account *acc = calloc(1, sizeof *acc);
  char why[512] = "";
  CHECK(nccl_account_read(acc, why, sizeof why) == -1 && strstr(why, "no log file"), "why: %s", why);
  free(acc);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  rmdir(dir); /* left by a process NCCL never logged in: the test cleans it */
  return check_summary();
}

static void run(const char *name, int (*fn)(void), int *passed, int *failed) {
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    int rc = fn();
    fflush(stdout);
    _exit(rc);
  }
  int st = 0;
  waitpid(p, &st, 0);
  int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  printf("%s: %s\n", name, ok ? "ok" : "FAILED");
  *passed += ok, *failed += !ok;
}

static int user_file_level(void) { return child_user_file(1); }
static int user_file_only(void) { return child_user_file(0); }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_nccl_account CAPTURED.log\n");
    return 2;
  }
  g_log = argv[1];
  int passed = 0, failed = 0;
  run("private file", child_private, &passed, &failed);
  run("spans", child_spans, &passed, &failed);
  run("NCCL_DEBUG without a file", child_user_level_only, &passed, &failed);
  run("the user's file and level", user_file_level, &passed, &failed);
  run("the user's file alone", user_file_only, &passed, &failed);
  run("no file written", child_no_file, &passed, &failed);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
