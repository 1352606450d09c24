/* bottom_figures.h: each subcommand's figures for its bottom line (cmd_def.bottom), from c->doc.
 *
 * defines: {run,accept,collectives,doctor,export}_bottom */
#ifndef DDPBENCH_BOTTOM_FIGURES_H
#define DDPBENCH_BOTTOM_FIGURES_H

#include "cmd.h"

#ifdef __cplusplus
extern "C" {
#endif

void run_bottom(const cmd_ctx *c, char *out, size_t n);
void accept_bottom(const cmd_ctx *c, char *out, size_t n);
void collectives_bottom(const cmd_ctx *c, char *out, size_t n);
void doctor_bottom(const cmd_ctx *c, char *out, size_t n);
void export_bottom(const cmd_ctx *c, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
