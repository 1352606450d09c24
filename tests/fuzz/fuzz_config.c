/* fuzz_config: libFuzzer target for the run's options alone (config_parse: the run's tables over the option
 * layer, then config_finish; fuzz_options covers every subcommand's set through cmd_parse). Input: the INI
 * text, then optionally a NUL byte and command-line arguments separated by newlines. Properties checked on every
 * input: config_parse ends with OK or a usage error (never a crash, a sanitizer report or a hang), a usage
 * error with a one-line message; a configuration it accepts (not --help or --version) passes config_validate,
 * and every key's printed value parses back to the same configuration (same hash). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (!path[0]) snprintf(path, sizeof path, "/tmp/ddpbench-fuzz-config-%ld.ini", (long)getpid());
  const uint8_t *nul = memchr(data, 0, n);
  size_t ini_n = nul ? (size_t)(nul - data) : n;
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fwrite(data, 1, ini_n, f);
  fclose(f);
  /* argv: ddpbench --config PATH, then the arguments after the NUL (at most 30) */
  char *args = NULL;
  char *argv[34] = {"ddpbench", "--config", path};
  int argc = 3;
  if (nul) {
    size_t k = n - ini_n - 1;
    args = malloc(k + 1);
    memcpy(args, nul + 1, k);
    args[k] = 0;
    for (char *save = NULL, *a = strtok_r(args, "\n", &save); a && argc < 33; a = strtok_r(NULL, "\n", &save))
      argv[argc++] = a;
  }
  static ddp_config cfg, back;
  char msg[1400];
  ddp_usage_capture(msg, sizeof msg);
  int help = 0;
  ddp_result r = config_parse(&cfg, argc, argv, &help);
  if (r != DDP_OK && r != DDP_ERR_USAGE) abort();
  if (r == DDP_ERR_USAGE && (!msg[0] || strchr(msg, '\n'))) abort(); /* every refusal says why, in one line */
  if (r == DDP_OK && !help) {
    if (config_validate(&cfg, NULL) != DDP_OK) abort();
    config_defaults(&back);
    const char *name;
    char value[1100];
    for (int i = 0; config_key_at(&cfg, i, &name, value, sizeof value); i++)
      if (config_set(&back, name, value, "round trip") != DDP_OK) abort();
    if (config_hash(&back) != config_hash(&cfg)) abort();
  }
  ddp_usage_capture(NULL, 0);
  free(args);
  return 0;
}
