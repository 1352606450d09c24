/* findings.h: the one verdict type of ddpbench. Every check (topology, doctor, weight verification, the
 * slowest rank, version and environment consistency, divergence of the loss) says what it found as a
 * finding {check, severity, scope, subject, measured, expected, unit, text}; a run prints them as one table
 * at the end, serialises them as one JSON array, and derives its exit code from them. Pure data and
 * formatting: nothing here measures, talks to other ranks or exits.
 *
 * defines: finding, finding_list, findings_{init,free,add,print,json,from_json,exit_code,count},
 *          finding_severity_name, finding_scope_name, finding_severity_parse, finding_scope_parse */
#ifndef DDPBENCH_FINDINGS_H
#define DDPBENCH_FINDINGS_H

#include <stdio.h>

#include <cJSON.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SEV_INFO = 0, SEV_WARN, SEV_FAIL, SEV_COUNT } finding_severity;
typedef enum { SCOPE_JOB = 0, SCOPE_HOST, SCOPE_RANK, SCOPE_GPU, SCOPE_LINK, SCOPE_PAIR, SCOPE_COUNT } finding_scope;

/* A finding's text, in bytes with its NUL: room for a soak's list of what it could not measure on 8 counters */
#define FINDING_TEXT_MAX 4096

typedef struct {
  char check[48];     /* what looked: "weights", "slowest_rank", "topology", "versions", "loss", ... */
  finding_severity severity;
  finding_scope scope;
  char subject[128];  /* what it is about: "job", "rank 3 (node07)", "node07", "GPU0-GPU1" */
  char host[256];     /* the host it is about ("" for the job, a pair of hosts, a link between two): the
                       * hosts' verdict (verdict/hosts.h) counts it against that host */
  int rank;           /* the world rank it is about, -1 for none */
  int passed;         /* an info finding that records a check that passed (its figure and the bound it met):
                       * in the document, counted but not listed in the table */
  double measured, expected; /* NaN when the check has no number */
  char unit[16];      /* of measured and expected: "ms", "%", "GB/s", "" */
  char text[FINDING_TEXT_MAX]; /* one sentence a user can act on; a longer one ends with "..." */
  int interval;       /* a soak's finding: the interval it names, from 1 (0: none, the whole run) */
  double t_s;         /* ... and the time, seconds since the soak started (NaN: none) */
} finding;

typedef struct {
  finding *v;
  int n, cap;
} finding_list;

void findings_init(finding_list *l);
void findings_free(finding_list *l);
/* Appends one finding (strings are truncated to their fields). Returns DDP_ERR_SYSTEM when out of memory. */
ddp_result findings_add(finding_list *l, const char *check, finding_severity sev, finding_scope scope,
                        const char *subject, double measured, double expected, const char *unit, const char *fmt,
                        ...) __attribute__((format(printf, 9, 10)));
/* As findings_add, about a host ("" for none) and a world rank (-1 for none). */
ddp_result findings_add_at(finding_list *l, const char *host, int rank, const char *check, finding_severity sev,
                           finding_scope scope, const char *subject, double measured, double expected,
                           const char *unit, const char *fmt, ...) __attribute__((format(printf, 11, 12)));
/* Appends a copy of f. */
ddp_result findings_push(finding_list *l, const finding *f);
/* Number of findings of at least this severity. */
int findings_count(const finding_list *l, finding_severity at_least);
/* The table: "# findings" then one "#  SEVERITY scope subject: text [measured vs expected unit]" line each,
 * worst first (stable within a severity); "#   none" when empty. */
void findings_print(FILE *out, const finding_list *l);
/* The same table with the failing and warning findings only; nothing when there are none (--quiet). */
void findings_print_notable(FILE *out, const finding_list *l);
/* [{check, severity, scope, subject, host, rank, measured, expected, unit, text}] (host and rank null where
 * none); NULL when out of memory. */
cJSON *findings_json(const finding_list *l);
/* Reads such an array back (appending to l). On bad input returns DDP_ERR_USAGE and puts the reason
 * ("findings[2].severity: \"bad\" is not info, warn or fail") in why. */
ddp_result findings_from_json(const cJSON *arr, finding_list *l, char *why, size_t whylen);
/* The process exit code a run's findings call for: 1 (DDP_EXIT_CHECK) when the weights check failed, else 5
 * (DDP_EXIT_NONFINITE) when a "nonfinite" check failed (NaN/Inf final weights or loss: the ranks may well agree,
 * on garbage), else 4 (DDP_EXIT_EXPECT) when any other check failed (an acceptance check: a straggler, a GPU
 * below its expectation), else 0. Warnings and information never fail a run (unless --strict, see run.c); bad
 * input and runtime errors have their own paths (2, 3). */
int findings_exit_code(const finding_list *l);

const char *finding_severity_name(finding_severity s);
const char *finding_scope_name(finding_scope s);
/* -1 when the name is unknown. */
int finding_severity_parse(const char *name);
int finding_scope_parse(const char *name);

#ifdef __cplusplus
}
#endif
#endif
