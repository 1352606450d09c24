/* test_compare_crafted.c: compare on crafted "nccl" sections and record names, the hostile trial's cases, with no
 * file: the sections are built here and go through cmp_nccl_build, cmp_nccl_explain and the text and markdown
 * printers (src/cmd/compare/). What must hold:
 *   - a version holding a newline and a fake bottom line, or ANSI escapes and a bell, prints neither: no ESC, no
 *     BEL, and "ddpbench compare:" starts only the real last line; a label with | breaks no markdown table row;
 *   - sizes that are no byte count (-1, 1e308, 2^64) print as the numbers they are (no conversion to an integer,
 *     undefined behaviour that UBSan catches in the sanitize build), and json_int on 1e300 gives its default;
 *   - 20,000 ranks with a version each are merged in under 1 s (a rescan of the joined text took 40 s). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "compare.h"
#include "json.h"

/* One rank's account: its version and label, one allreduce choice at bytes with channels. */
static cJSON *rank_entry(int rank, const char *version, const char *label, double bytes, int channels) {
  cJSON *e = cJSON_CreateObject(), *acc = cJSON_AddObjectToObject(e, "account");
  cJSON_AddNumberToObject(e, "rank", rank);
  cJSON_AddStringToObject(acc, "version", version);
  cJSON *c = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(acc, "communicators"), c);
  cJSON_AddStringToObject(c, "label", label);
  cJSON_AddNumberToObject(cJSON_AddObjectToObject(c, "channels"), "coll", channels);
  cJSON *a = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "algorithms"), a);
  cJSON_AddStringToObject(a, "coll", "AllReduce");
  cJSON_AddNumberToObject(a, "bytes", bytes);
  cJSON_AddStringToObject(a, "algo", "RING");
  cJSON_AddStringToObject(a, "proto", "SIMPLE");
  cJSON_AddNumberToObject(a, "channels", channels);
  return e;
}

static cJSON *section(int nranks, const char *version, const char *label, double bytes, int channels) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddTrueToObject(s, "reported");
  cJSON *ranks = cJSON_AddArrayToObject(s, "ranks");
  for (int r = 0; r < nranks; r++) cJSON_AddItemToArray(ranks, rank_entry(r, version, label, bytes, channels));
  return s;
}

/* The text (md 0) or markdown (md 1) report of A's section against B's, one metric line; malloc'ed. */
static char *report(const cJSON *a, const cJSON *b, int md, const char *metric) {
  cmp_options o;
  cmp_options_defaults(&o);
  cmp_report r;
  cmp_report_init(&r, &o);
  double x[4] = {1, 1.01, 0.99, 1}, y[4] = {2, 2.01, 1.99, 2};
  cmp_input in = {.a = x, .b = y, .na = 4, .nb = 4, .runs_a = 4, .runs_b = 4, .better = CMP_LOWER_BETTER};
  r.runs_a = r.runs_b = 4;
  CHECK(cmp_report_add(&r, metric, "ms", &in) == 0, "a line");
  CHECK(cmp_nccl_build(&a, 1, &b, 1, &r) == 0 && cmp_nccl_explain(&r) == 0, "built");
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  cmp_report_print(&r, md ? CMP_MD : CMP_TEXT, m);
  fclose(m);
  cmp_report_free(&r);
  return text;
}

/* 1 when some line but the last starts with "ddpbench compare:". */
static int fake_bottom_line(const char *t) {
  const char *last = t + strlen(t);
  while (last > t && last[-1] == '\n') last--;
  while (last > t && last[-1] != '\n') last--;
  for (const char *p = t; p < last; p = strchr(p, '\n') + 1)
    if (!strncmp(p, "ddpbench compare:", 17)) return 1;
  return 0;
}

static void test_injection(void) {
  const char *nl = "2.28.9\nddpbench compare: PASS  no regression (injected)\n";
  const char *ansi = "\x1b[2J\x1b[1;31mPWNED\x1b[0m\a";
  const char *pipe = "=HYPERLINK(\"http://x\")|evil|\n| injected | row |";
  cJSON *a = section(1, "2.27.7", "coll", 1 << 20, 32), *b1 = section(1, nl, "coll", 1 << 20, 32);
  cJSON *b2 = section(1, ansi, "coll", 1 << 20, 32);
  cJSON *a3 = section(1, "2.27.7", pipe, 1 << 20, 32), *b3 = section(1, "2.27.7", pipe, 1 << 20, 16);
  for (int md = 0; md < 2; md++) {
    char *t = report(a, b1, md, "train step_ms"), *u = report(a, b2, md, "x\x1b]8;;http://e\x07y");
    CHECK(t && !fake_bottom_line(t), "%s: a version's newline printed a line of its own\n%s", md ? "md" : "text", t);
    CHECK(t && strstr(t, "2.28.9\\nddpbench compare: PASS"), "%s: the newline shown as \\n\n%s", md ? "md" : "text", t);
    CHECK(u && !strchr(u, '\x1b') && !strchr(u, '\a'), "%s: an ESC or BEL reached the output", md ? "md" : "text");
    CHECK(u && strstr(u, "\\x1b[2J\\x1b[1;31mPWNED"), "%s: the escapes shown as \\x1b\n%s", md ? "md" : "text", u);
    free(t), free(u);
  }
  /* markdown: every row of the NCCL table has its 5 unescaped pipes */
  char *m = report(a3, b3, 1, "train step_ms");
  const char *h = m ? strstr(m, "| what | A | B | change |") : NULL;
  CHECK(h != NULL, "the NCCL table\n%s", m ? m : "");
  int rows = 0, bad = 0;
  for (const char *p = h; p && *p == '|'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL, rows++) {
    int pipes = 0;
    for (const char *q = p; *q && *q != '\n'; q++) pipes += *q == '|' && (q == p || q[-1] != '\\');
    bad += pipes != 5;
  }
  CHECK(rows >= 3 && !bad, "%d of %d markdown rows with other than 5 cells' pipes\n%s", bad, rows, m);
  free(m);
  cJSON_Delete(a), cJSON_Delete(b1), cJSON_Delete(b2), cJSON_Delete(a3), cJSON_Delete(b3);
}

static void test_numbers(void) {
  static const struct {
    double bytes;
    const char *shown;
  } cases[] = {{-1, "-1 B"}, {1e308, "1e+308 B"}, {18446744073709551616.0, "1.84467e+19 B"}, {0.5, "0.5 B"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cJSON *a = section(1, "v", "coll", cases[i].bytes, 32), *b = section(1, "v", "coll", cases[i].bytes, 16);
    char *t = report(a, b, 0, "train step_ms");
    CHECK(t && strstr(t, cases[i].shown), "bytes %g shown as %s\n%s", cases[i].bytes, cases[i].shown, t ? t : "");
    CHECK(t && !strstr(t, "18446744073709551615") && !strstr(t, "9223372036854775808"), "bytes %g: a cast's garbage",
          cases[i].bytes);
    free(t), cJSON_Delete(a), cJSON_Delete(b);
  }
  cJSON *o = cJSON_Parse("{\"big\": 1e300, \"neg\": -1e300, \"over\": 2147483648, \"under\": -2147483649, "
                         "\"max\": 2147483647, \"min\": -2147483648, \"frac\": -2.5}");
  CHECK(json_int(o, "big", -7) == -7 && json_int(o, "neg", -7) == -7, "json_int: 1e300 and -1e300 give the default");
  CHECK(json_int(o, "over", -7) == -7 && json_int(o, "under", -7) == -7, "json_int: just past int's range");
  CHECK(json_int(o, "max", 0) == 2147483647 && json_int(o, "min", 0) == -2147483647 - 1, "json_int: int's ends");
  CHECK(json_int(o, "frac", 0) == -2, "json_int: -2.5 cut toward 0");
  cJSON_Delete(o);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_many_versions(void) {
  enum { N = 20000 };
  cJSON *a = cJSON_CreateObject();
  cJSON_AddTrueToObject(a, "reported");
  cJSON *ranks = cJSON_AddArrayToObject(a, "ranks");
  for (int r = 0; r < N; r++) {
    char v[32];
    snprintf(v, sizeof v, "2.%d.%d", r / 100, r % 100);
    cJSON_AddItemToArray(ranks, rank_entry(r, v, "coll", 1 << 20, 32));
  }
  cJSON *b = section(1, "2.0.0", "coll", 1 << 20, 32);
  cmp_options o;
  cmp_options_defaults(&o);
  cmp_report r;
  cmp_report_init(&r, &o);
  double t0 = now_s();
  int rc = cmp_nccl_build((const cJSON *const *)&a, 1, (const cJSON *const *)&b, 1, &r);
  double dt = now_s() - t0;
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature) /* clang before 16 (Debian 12 has 14) says ASan only through __has_feature */
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
  const double bound = 10; /* ASan's allocator and checks: a constant factor, not the quadratic 365 s seen */
#else
  const double bound = 1;
#endif
  printf("20,000 ranks with a version each: %.3f s\n", dt);
  CHECK(rc == 0 && dt < bound, "20,000 ranks with a version each: %.2f s (at most %g s)", dt, bound);
  int found = 0;
  for (int i = 0; i < r.nccl.ndiff; i++)
    if (!strcmp(r.nccl.diff[i].what, "version"))
      found = !strncmp(r.nccl.diff[i].a, "2.0.0, 2.0.1, 2.0.2", 19) && strstr(r.nccl.diff[i].a, ", 2.199.99") != NULL;
  CHECK(found, "the versions joined in the ranks' order");
  cmp_report_free(&r);
  cJSON_Delete(a), cJSON_Delete(b);
}

int main(void) {
  test_injection();
  test_numbers();
  test_many_versions();
  return check_summary();
}
