/* envcheck.c: groups the ranks by the value they hold for each version field and NCCL_* variable and
 * reports every item with more than one value, naming the ranks. Works on gathered plain records only; no
 * MPI, and nothing here fails: out of memory degrades to reporting less. */
#include "envcheck.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "result.h"

extern char **environ;

#define FIELD(f, label) \
  { #f, label, offsetof(ddp_versions, f) }
static const struct {
  const char *name, *label;
  size_t offset;
} fields[] = {
    FIELD(nvidia_driver, "NVIDIA driver"),
    FIELD(cuda_driver, "CUDA driver"),
    FIELD(cuda_runtime, "CUDA runtime"),
    FIELD(cublas, "cuBLAS"),
    FIELD(nccl_header, "NCCL header"),
    FIELD(nccl_runtime, "NCCL runtime"),
    FIELD(nccl_library, "NCCL library"),
    FIELD(mpi, "MPI"),
    FIELD(hwloc, "hwloc"),
    FIELD(blas, "BLAS"),
    FIELD(ddpbench, "ddpbench"),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static const char *field_of(const ddp_versions *v, size_t f) { return (const char *)v + fields[f].offset; }

const char *envcheck_version_field(const ddp_versions *v, int i, const char **name) {
  if (i < 0 || (size_t)i >= NFIELDS) return NULL;
  if (name) *name = fields[i].name;
  return field_of(v, (size_t)i);
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int envcheck_nccl_env(char *buf, size_t n) {
  size_t count = 0, used = 0;
  int dropped = 0;
  if (n) buf[0] = 0;
  /* ddpbench's own settings (ddp_setenv_own: NCCL's account) are not the user's environment */
  for (char **e = environ; e && *e; e++) count += !strncmp(*e, "NCCL_", 5);
  char **vars = malloc((count ? count : 1) * sizeof *vars);
  if (!vars) return 1;
  count = 0;
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "NCCL_", 5)) continue;
    const char *eq = strchr(*e, '=');
    char nm[256];
    snprintf(nm, sizeof nm, "%.*s", eq ? (int)(eq - *e) : 0, *e);
    if (!ddp_env_is_own(nm)) vars[count++] = *e;
  }
  qsort(vars, count, sizeof *vars, name_cmp);
  for (size_t i = 0; i < count; i++) {
    /* the result writer's rule: a secret-looking name's value is not recorded (printed, compared, written) */
    const char *eq = strchr(vars[i], '=');
    char name[256];
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - vars[i]) : 0, vars[i]);
    int secret = eq && result_env_redacted(name);
    size_t len = secret ? strlen(name) + 1 + strlen(RESULT_REDACTED) : strlen(vars[i]);
    if (used + len + 2 > n) {
      dropped = 1;
      continue;
    }
    if (secret) snprintf(buf + used, n - used, "%s=%s", name, RESULT_REDACTED);
    else memcpy(buf + used, vars[i], len);
    buf[used + len] = '\n';
    used += len + 1;
    buf[used] = 0;
  }
  free(vars);
  return dropped;
}

void rankset_format(const int *ranks, int n, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, n == 1 ? "rank " : "ranks ");
  for (int i = 0; i < n && used < len; i++) {
    int j = i;
    while (j + 1 < n && ranks[j + 1] == ranks[j] + 1) j++;
    char item[32];
    if (j > i)
      snprintf(item, sizeof item, "%s%d-%d", i ? "," : "", ranks[i], ranks[j]);
    else
      snprintf(item, sizeof item, "%s%d", i ? "," : "", ranks[i]);
    if (used + strlen(item) + 4 >= len) {
      snprintf(buf + used, len - used, "...");
      return;
    }
    used += (size_t)snprintf(buf + used, len - used, "%s", item);
    i = j;
  }
}

/* ---- grouping ---- */

typedef struct {
  const char *value; /* "" = unset */
  int rank;
} entry;

static int entry_cmp(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  int c = strcmp(a->value, b->value);
  return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

/* Sorts e[0..n) by value; when more than one value is present, prints and records the groups in order of
 * their lowest rank. Returns 1 if the item differs. */
static int item_report(const char *item, entry *e, int n, int *ranks, FILE *out, cJSON *diffs) {
  qsort(e, (size_t)n, sizeof *e, entry_cmp);
  int groups = 0;
  for (int i = 0; i < n; i++) groups += i == 0 || strcmp(e[i].value, e[i - 1].value);
  if (groups <= 1) return 0;
  /* Group starts, ordered by the group's lowest rank (the first entry of each group). */
  int *start = malloc((size_t)groups * sizeof *start);
  if (!start) return 1;
  for (int i = 0, g = 0; i < n; i++)
    if (i == 0 || strcmp(e[i].value, e[i - 1].value)) start[g++] = i;
  for (int a = 1; a < groups; a++)
    for (int b = a; b > 0 && e[start[b]].rank < e[start[b - 1]].rank; b--) {
      int t = start[b];
      start[b] = start[b - 1];
      start[b - 1] = t;
    }
  cJSON *jd = diffs ? cJSON_CreateObject() : NULL, *jv = NULL;
  if (jd) {
    cJSON_AddStringToObject(jd, "item", item);
    jv = cJSON_AddArrayToObject(jd, "values");
    cJSON_AddItemToArray(diffs, jd);
  }
  if (out) fprintf(out, "  %s differs:", item);
  for (int g = 0; g < groups; g++) {
    int k = 0;
    for (int i = start[g]; i < n && !strcmp(e[i].value, e[start[g]].value); i++) ranks[k++] = e[i].rank;
    char set[256];
    rankset_format(ranks, k, set, sizeof set);
    const char *v = e[start[g]].value[0] ? e[start[g]].value : "<unset>";
    if (out) fprintf(out, "%s %s on %s", g ? ";" : "", v, set);
    cJSON *x = jv ? cJSON_CreateObject() : NULL;
    if (x) {
      cJSON_AddStringToObject(x, "value", e[start[g]].value);
      cJSON_AddStringToObject(x, "ranks", set);
      cJSON_AddItemToArray(jv, x);
    }
  }
  if (out) fputc('\n', out);
  free(start);
  return 1;
}

/* Value of NAME in "NAME=value\n" lines, copied into val; "" when unset. */
static void env_value(const char *env, const char *name, size_t name_len, char *val, size_t n) {
  val[0] = 0;
  for (const char *line = env; line && *line;) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    if (len > name_len && !strncmp(line, name, name_len) && line[name_len] == '=') {
      size_t vlen = len - name_len - 1;
      if (vlen >= n) vlen = n - 1;
      memcpy(val, line + name_len + 1, vlen);
      val[vlen] = 0;
      return;
    }
    line = eol ? eol + 1 : NULL;
  }
}

int envcheck_compare(const envcheck_rank *ranks, int n, FILE *out, cJSON *diffs) {
  if (n <= 0) return 0;
  entry *e = malloc((size_t)n * sizeof *e);
  int *set = malloc((size_t)n * sizeof *set);
  if (!e || !set) {
    free(e);
    free(set);
    return 0;
  }
  int differing = 0;
  for (size_t f = 0; f < NFIELDS; f++) {
    for (int r = 0; r < n; r++) e[r] = (entry){field_of(ranks[r].versions, f), ranks[r].rank};
    differing += item_report(fields[f].label, e, n, set, out, diffs);
  }
  /* NCCL_* variables: every name any rank has, compared with "unset" on the others. */
  size_t nnames = 0, cap = 0;
  char **names = NULL;
  for (int r = 0; r < n; r++)
    for (const char *line = ranks[r].nccl_env; line && *line;) {
      const char *eq = strchr(line, '='), *eol = strchr(line, '\n');
      if (!eol) eol = line + strlen(line);
      if (eq && eq < eol) {
        size_t len = (size_t)(eq - line), i = 0;
        while (i < nnames && !(strlen(names[i]) == len && !strncmp(names[i], line, len))) i++;
        if (i == nnames) {
          if (nnames == cap) {
            char **nn = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
            if (!nn) break;
            names = nn;
          }
          names[nnames] = strndup(line, len);
          if (names[nnames]) nnames++;
        }
      }
      line = *eol ? eol + 1 : eol;
    }
  if (nnames) qsort(names, nnames, sizeof *names, name_cmp);
  char *values = malloc((size_t)n * 512);
  for (size_t i = 0; values && i < nnames; i++) {
    for (int r = 0; r < n; r++) {
      env_value(ranks[r].nccl_env, names[i], strlen(names[i]), values + (size_t)r * 512, 512);
      e[r] = (entry){values + (size_t)r * 512, ranks[r].rank};
    }
    differing += item_report(names[i], e, n, set, out, diffs);
  }
  for (size_t i = 0; i < nnames; i++) free(names[i]);
  free(names);
  free(values);
  free(e);
  free(set);
  return differing;
}

void envcheck_print_versions(const ddp_versions *v, FILE *out) {
  const char *sep = "";
  for (size_t f = 0; f < NFIELDS; f++) {
    const char *s = field_of(v, f);
    if (!s[0]) continue;
    fprintf(out, "%s%s %s", sep, fields[f].label, s);
    sep = ", ";
  }
  fputc('\n', out);
}

cJSON *envcheck_versions_json(const ddp_versions *v) {
  cJSON *o = cJSON_CreateObject();
  for (size_t f = 0; o && f < NFIELDS; f++) cJSON_AddStringToObject(o, fields[f].name, field_of(v, f));
  return o;
}
