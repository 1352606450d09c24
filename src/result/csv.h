/* csv.h: a result document's records as CSV (RFC 4180) for spreadsheets: csv.c says the columns. Reads the
 * result model only. */
#ifndef DDPBENCH_CSV_H
#define DDPBENCH_CSV_H

#include <stdio.h>

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The text (malloc'd, *out). */
ddp_result csv_format(const result_doc *d, char **out);
/* One field, quoted (RFC 4180) when it holds a comma, a quote, CR or LF, and with a ' in front when a spreadsheet
 * would run it as a formula; not UTF-8 bytes as U+FFFD: the one quoting rule of every CSV ddpbench writes
 * (compare's too). */
void csv_quote(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif
