/* export.h: `ddpbench export`, a saved result file as a node_exporter textfile, CSV and/or the current
 * schema's JSON (export.c). */
#ifndef DDPBENCH_EXPORT_H
#define DDPBENCH_EXPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is "export". Returns the exit code: 0, or 2 on bad input (one line on stderr), 3 on I/O errors. */
int export_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
