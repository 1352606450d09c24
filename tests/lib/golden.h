/* golden.h: what the conformance tests (test_conformance, test_conformance_fsdp) share to read the golden files
 * that PyTorch made (tests/data/golden/): loading one, checked to name the PyTorch it must come from, typed
 * access to its members, and the run's options from an argument list as a user would type them. Test-only,
 * header-only. */
#ifndef DDPBENCH_TESTS_GOLDEN_H
#define DDPBENCH_TESTS_GOLDEN_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "commands.h"
#include "config.h"
#include "testlib.h"

/* dir/name parsed, or NULL (a failed check) when it is missing, not JSON, or made by a PyTorch other than torch
 * (DDPBENCH_GOLDEN_TORCH overrides it); regen says how to make it again. Rank 0 prints which PyTorch made it. */
static inline cJSON *golden_file(const char *dir, const char *name, int rank, const char *torch, const char *regen) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *text = tl_file_slurp(path);
  CHECK(text != NULL, "golden file %s is missing: regenerate with %s", path, regen);
  if (!text) return NULL;
  cJSON *doc = cJSON_Parse(text);
  free(text);
  CHECK(doc != NULL, "golden file %s: not JSON", path);
  if (!doc) return NULL;
  const cJSON *v = cJSON_GetObjectItem(doc, "torch");
  const char *want = getenv("DDPBENCH_GOLDEN_TORCH") ? getenv("DDPBENCH_GOLDEN_TORCH") : torch;
  int ok = cJSON_IsString(v) && strncmp(v->valuestring, want, strlen(want)) == 0;
  CHECK(ok, "golden file %s was made by PyTorch %s, not %s: regenerate with %s", path,
        cJSON_IsString(v) ? v->valuestring : "?", want, regen);
  if (rank == 0 && cJSON_IsString(v)) {
    const cJSON *dev = cJSON_GetObjectItem(doc, "device"), *date = cJSON_GetObjectItem(doc, "date");
    printf("# %-16s checked against PyTorch %s (%s, %s)\n", name, v->valuestring,
           cJSON_IsString(dev) ? dev->valuestring : "?", cJSON_IsString(date) ? date->valuestring : "?");
  }
  if (!ok) {
    cJSON_Delete(doc);
    return NULL;
  }
  return doc;
}

static inline int jint(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsNumber(v) ? v->valueint : -1;
}
static inline const char *jstr(const cJSON *o, const char *k, const char *def) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsString(v) ? v->valuestring : def;
}
/* Reads up to max numbers of array k into out; returns how many (-1 if absent). */
static inline int jdoubles(const cJSON *o, const char *k, double *out, int max) {
  const cJSON *a = cJSON_GetObjectItem(o, k);
  if (!cJSON_IsArray(a)) return -1;
  int n = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, a) if (n < max) out[n++] = x->valuedouble;
  return n;
}

/* The run's options from an argument list, as a user would type it (the skeleton's parse, cmd.h). */
static inline ddp_result parse_args(ddp_config *c, int argc, const char **argv) {
  static cmd_ctx ctx;
  memset(c, 0, sizeof *c);
  ddp_result r = cmd_parse(&ctx, &cmd_run, argc, (char **)argv);
  if (r == DDP_OK) *c = *(ddp_config *)ctx.args;
  cmd_free(&ctx);
  return r;
}

#endif
