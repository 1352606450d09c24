/* test_compare_e2e.c: launch/ab.sh and `ddpbench compare` end to end on the CPU device with two MPI stacks
 * that really differ: Open MPI's shared-memory transport (btl vader) against TCP over loopback (btl tcp) with
 * 2 KiB socket buffers, 2 ranks, 32 KiB allreduces. Plain loopback TCP was only about 1.8 x slower than vader,
 * and on this shared 2-core machine a vader run lands in a slow mode (2.5 x its fast one) about half the time,
 * so the two sides' runs overlapped and the regression went unseen (p 0.065 with 6 + 6 runs, in CI's own test
 * command); TCP with 2 KiB buffers is 25-60 x slower, beyond any mode of either side. Asserts:
 *   - the runs are interleaved ABBA (order.txt);
 *   - the provenance diff is exactly the sides' labels (config.label side=A | side=B, ab.sh's --label),
 *     env.OMPI_MCA_btl (self,vader | self,tcp), the TCP interface (OMPI_MCA_btl_tcp_if_include: (unset) | lo)
 *     and the two buffer sizes, and it is printed first;
 *   - compare calls the comm phase's step time and 32 KiB allreduce time significantly worse, exit 5;
 *   - an A/A run (--aa, with a library folder) has the same provenance on both sides, an empty diff, and
 *     records the folder in both sides' environments;
 *   - ab.sh refuses bad usage with exit 2 and never overwrites a results folder.
 * Usage: test_compare_e2e SOURCE_DIR DDPBENCH_BINARY */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testlib.h"

static char tmp[] = "/tmp/ddpbench-test-compare-e2e-XXXXXX";
static int tmp_made;

static void cleanup(void) {
  if (tmp_made) tl_rmtree(tmp);
}

static const cJSON *metric(const cJSON *doc, const char *name) {
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItem(doc, "metrics")) {
    if (strcmp(cJSON_GetObjectItem(m, "name")->valuestring, name) == 0) return m;
  }
  return NULL;
}

static const char *verdict(const cJSON *doc, const char *name) {
  const cJSON *m = metric(doc, name);
  return m ? cJSON_GetObjectItem(m, "verdict")->valuestring : "(absent)";
}

static int diff_is(const cJSON *diff, const char *key, const char *a, const char *b) {
  const cJSON *d;
  cJSON_ArrayForEach(d, diff) {
    if (strcmp(cJSON_GetObjectItem(d, "key")->valuestring, key) == 0)
      return strcmp(cJSON_GetObjectItem(d, "a")->valuestring, a) == 0 &&
             strcmp(cJSON_GetObjectItem(d, "b")->valuestring, b) == 0;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_compare_e2e SOURCE_DIR DDPBENCH\n");
    return 2;
  }
  const char *src = argv[1], *bin = argv[2];
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 1;
  }
  tmp_made = 1;
  atexit(cleanup);
  char cmd[4096], path[1024];
  const char *model = "--hidden 64 --layers 2 --batch 8 --steps 50 --warmup 5 --phases comm,ddp";
  tl_file_write(tl_path(tmp, "vader.env"), "# shared memory\nOMPI_MCA_btl=self,vader\n");
  tl_file_write(tl_path(tmp, "tcp.env"),
                "OMPI_MCA_btl=self,tcp\n# loopback, which every machine has (Open MPI leaves it out by default)\n"
                "OMPI_MCA_btl_tcp_if_include=lo\n# small socket buffers: many round trips per message\n"
                "OMPI_MCA_btl_tcp_sndbuf=2048\nOMPI_MCA_btl_tcp_rcvbuf=2048\n");

  /* A/B: vader against tcp */
  snprintf(cmd, sizeof cmd,
           "DDPBENCH_BIN=%s %s/launch/ab.sh -n 6 -np 2 --a-env %s/vader.env --b-env %s/tcp.env --out %s/ab -- %s "
           "> %s/ab.out 2> %s/ab.err",
           bin, src, tmp, tmp, tmp, model, tmp, tmp);
  int rc = tl_sh(cmd);
  CHECK(rc == 5, "ab.sh vader vs tcp exited %d (want 5: a significant regression beyond 2 %%)", rc);
  snprintf(path, sizeof path, "%s/ab/order.txt", tmp);
  char *order = tl_file_slurp(path);
  const char *want = "a 1 b 1 b 2 a 2 a 3 b 3 b 4 a 4 a 5 b 5 b 6 a 6 ";
  char got[256] = "";
  for (char *line = order ? strtok(order, "\n") : NULL; line; line = strtok(NULL, "\n")) {
    char s[4];
    int i;
    if (sscanf(line, "%3s %d", s, &i) == 2) snprintf(got + strlen(got), sizeof got - strlen(got), "%s %d ", s, i);
  }
  CHECK(strcmp(got, want) == 0, "run order '%s', want ABBA '%s'", got, want);
  free(order);

  snprintf(path, sizeof path, "%s/ab/compare.json", tmp);
  cJSON *doc = tl_json_load(path);
  CHECK(doc != NULL, "%s missing or not JSON", path);
  if (doc) {
    const cJSON *diff = cJSON_GetObjectItem(doc, "provenance_diff");
    /* ab.sh labels its sides (--label side=A / side=B): compare lists the label among what differs */
    CHECK(cJSON_GetArraySize(diff) == 5 && diff_is(diff, "config.label", "side=A", "side=B") &&
              diff_is(diff, "env.OMPI_MCA_btl", "self,vader", "self,tcp") &&
              diff_is(diff, "env.OMPI_MCA_btl_tcp_if_include", "(unset)", "lo") &&
              diff_is(diff, "env.OMPI_MCA_btl_tcp_sndbuf", "(unset)", "2048") &&
              diff_is(diff, "env.OMPI_MCA_btl_tcp_rcvbuf", "(unset)", "2048"),
          "provenance diff is not exactly config.label side=A | side=B, env.OMPI_MCA_btl self,vader | self,tcp, "
          "env.OMPI_MCA_btl_tcp_if_include (unset) | lo and the two buffer sizes (unset) | 2048 (%d entries)", cJSON_GetArraySize(diff));
    CHECK(strcmp(verdict(doc, "comm step_ms"), "-") == 0, "comm step_ms verdict '%s' (want '-')",
          verdict(doc, "comm step_ms"));
    CHECK(strcmp(verdict(doc, "comm allreduce_time_us bytes=32768 type=float"), "-") == 0,
          "comm 32 KiB allreduce time verdict '%s' (want '-')", verdict(doc, "comm allreduce_time_us bytes=32768 type=float"));
    CHECK(cJSON_GetObjectItem(doc, "a") && cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "a"), "runs")->valueint == 6,
          "side A does not hold 6 runs");
    cJSON_Delete(doc);
  }
  snprintf(path, sizeof path, "%s/ab/compare.txt", tmp);
  char *text = tl_file_slurp(path);
  char *diff_at = text ? strstr(text, "env.OMPI_MCA_btl") : NULL, *rows_at = text ? strstr(text, "comm step_ms") : NULL;
  CHECK(diff_at && rows_at && diff_at < rows_at, "compare.txt: the provenance diff must come before the metrics");
  if (text) printf("%s", text);
  free(text);

  /* A/A with a library folder: same provenance, empty diff */
  snprintf(cmd, sizeof cmd,
           "DDPBENCH_BIN=%s %s/launch/ab.sh --aa -n 4 -np 2 --a-env %s/vader.env --a-ld %s --out %s/aa -- %s "
           "> %s/aa.out 2> %s/aa.err",
           bin, src, tmp, tmp, tmp, model, tmp, tmp);
  rc = tl_sh(cmd);
  CHECK(rc == 0 || rc == 5, "ab.sh --aa exited %d (want 0 or 5)", rc);
  snprintf(path, sizeof path, "%s/aa/compare.json", tmp);
  doc = tl_json_load(path);
  CHECK(doc && cJSON_IsTrue(cJSON_GetObjectItem(doc, "same_provenance")) &&
            cJSON_GetArraySize(cJSON_GetObjectItem(doc, "provenance_diff")) == 0,
        "A/A: provenance differs between identical stacks");
  cJSON_Delete(doc);
  snprintf(path, sizeof path, "%s/aa/b.env", tmp);
  char *benv = tl_file_slurp(path), needle[512];
  snprintf(needle, sizeof needle, "LD_LIBRARY_PATH=%s", tmp);
  CHECK(benv && strstr(benv, "OMPI_MCA_btl=self,vader") && strstr(benv, needle),
        "A/A: side B's environment is not side A's: %s", benv ? benv : "(none)");
  free(benv);

  /* bad usage: exit 2, nothing run */
  snprintf(cmd, sizeof cmd, "DDPBENCH_BIN=%s %s/launch/ab.sh --aa --b-env %s/tcp.env --out %s/x -- %s 2>/dev/null", bin,
           src, tmp, tmp, model);
  CHECK(tl_sh(cmd) == 2, "ab.sh --aa with a B environment not refused");
  snprintf(cmd, sizeof cmd, "DDPBENCH_BIN=%s %s/launch/ab.sh -n 4 --out %s/ab -- %s 2>/dev/null", bin, src, tmp, model);
  CHECK(tl_sh(cmd) == 2, "ab.sh overwrote an existing results folder");
  snprintf(cmd, sizeof cmd, "DDPBENCH_BIN=%s %s/launch/ab.sh -n 4 --a-env %s/missing.env --out %s/y 2>/dev/null", bin,
           src, tmp, tmp);
  CHECK(tl_sh(cmd) == 2, "ab.sh accepted an env file that does not exist");
  snprintf(cmd, sizeof cmd, "DDPBENCH_BIN=%s %s/launch/ab.sh -n 2>/dev/null", bin, src);
  CHECK(tl_sh(cmd) == 2, "ab.sh -n without a value not refused with exit 2");
  snprintf(path, sizeof path, "%s/bad.env", tmp);
  tl_file_write(path, "export OMPI_MCA_btl=self\n");
  snprintf(cmd, sizeof cmd, "DDPBENCH_BIN=%s %s/launch/ab.sh -n 4 --a-env %s --out %s/z -- %s 2>/dev/null", bin, src, path,
           tmp, model);
  CHECK(tl_sh(cmd) == 2, "ab.sh accepted an env file line that is not KEY=VALUE");
  return check_summary();
}
