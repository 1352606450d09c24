/* options.h: the one option layer of every ddpbench subcommand. A subcommand's options are tables of keys
 * (opt_table: each key a name, a type, a field of a struct, a default as text, a range or choices, a help
 * line); the same table drives the INI file (--config), the command line, --help, the hash the ranks compare
 * before work, the echo into the result file's "config" section and the messages that name where a value came
 * from. A subcommand's set (opt_set) is its own table plus the tables of the measurements it runs, each over
 * its own struct; their keys share one namespace.
 *
 * The rules, the same for every subcommand:
 *   --key value and --key=value (dashes on the command line, underscores in a file; either is accepted on the
 *     command line); -k value and -kvalue for the keys that have a short name; -h and --help, --version.
 *   A value that starts with "--" is refused unless it is given as --key=--value ("--json --force" must not
 *     create a file named --force); "-" and negative numbers are values.
 *   A boolean: --key alone is true; --key=true|false; --key true|false when the next word is exactly one of
 *     those. In a file and after '=': true, false (1, 0, yes, no, on, off are accepted too).
 *   --config FILE: keys in the section named after the subcommand ([accept]); the run takes its keys from every
 *     section not named after a subcommand ([model], [run], ...). A section named after another subcommand is
 *     checked against that subcommand's keys, so that one file can serve them all and a key in the wrong
 *     section is an error naming the file and line. The command line wins over the file.
 *   Every error is one line, "WHERE: KEY must be ..." with WHERE the option or FILE:LINE, and DDP_ERR_USAGE.
 * Pure: no MPI, no device, no exit. Errors go through ddp_usage_error (common.h), so that a caller can capture
 * each rank's message with ddp_usage_capture.
 *
 * defines: opt_type, opt_spec, opt_table, opt_set, opt_{set_init,set_add,parse,defaults,apply,where,given,
 *          hash,key_at,key_agreed,help,format}, OPT_* flags */
#ifndef DDPBENCH_OPTIONS_H
#define DDPBENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  OPT_INT,    /* int, range [min, max] */
  OPT_U64,    /* unsigned long long, decimal or 0x hex */
  OPT_DOUBLE, /* double, finite, range [min, max] */
  OPT_BOOL,   /* int 0/1 */
  OPT_ENUM,   /* int: the index in choices ("a|b|c"), or the value choice() gives */
  OPT_STR,    /* char[size] */
  OPT_SIZE,   /* size_t bytes: 1048576, 64K, 32M, 8G (1024-based, as nccl-tests) */
  OPT_CUSTOM  /* parse() and format() below */
} opt_type;

/* Flags of a key. */
enum {
  OPT_OUTPUT = 1u << 0,   /* a file rank 0 writes: checked before any work (atomic_file_check); "-" = stdout */
  OPT_OUTDIR = 1u << 1,   /* a folder each host's first rank writes into: checked before any work */
  OPT_NO_HASH = 1u << 2,  /* not part of what the ranks must agree on */
  OPT_OPERANDS = 1u << 3, /* OPT_STR: the words that are no option are appended here, comma-separated */
  OPT_HIDDEN = 1u << 4,   /* not listed by --help (nccl-tests options accepted at their only value) */
  OPT_INPUT = 1u << 5,    /* OPT_STR: a file (or a comma-separated list) every rank reads; its contents, not only
                           * its name, must agree */
  OPT_FILES = 1u << 7,    /* OPT_OPERANDS of file names: operands joined with '\n' (a name may hold a comma);
                           * a value from the file or --key is a comma-separated list, stored the same way,
                           * unless it holds a newline: then it is that stored form, one name a line (printed
                           * so: a single name with a comma is printed with a newline after it) */
  OPT_FIXED = 1u << 6,    /* a number accepted at min (== max) only, also when that is 0 (nccl-tests' -z 0) */
};

typedef struct opt_spec {
  const char *key;      /* the INI key; --key with dashes on the command line */
  const char *aliases;  /* other names, '|'-separated, as on the command line without "--" ("minbytes|min-bytes") */
  char shrt;            /* -b; 0 for none */
  opt_type type;
  size_t offset, size;  /* the field; size: OPT_STR's buffer */
  const char *def;      /* default, as text through the same parser ("" for an empty string) */
  double min, max;      /* OPT_INT, OPT_DOUBLE, OPT_SIZE: the inclusive range (min == max == 0: none, unless OPT_FIXED) */
  const char *choices;  /* OPT_ENUM: "a|b|c" stored as the index; NULL when choice() gives them */
  /* OPT_ENUM from another table (the device and comm registries): the value stored for choice i and its name;
   * -1 past the end. */
  int (*choice)(int i, const char **name);
  /* OPT_CUSTOM: set the field from text (0, or -1 with the reason in err, worded to follow "KEY must be"),
   * and the field back as text. */
  int (*parse)(void *field, const char *value, char *err, size_t errn);
  void (*format)(const void *field, char *out, size_t n);
  const char *arg;      /* --help's placeholder: "N", "FILE", "MIB"; NULL: from the type */
  const char *help;     /* one line */
  unsigned flags;
} opt_spec;

typedef struct opt_table {
  const char *group; /* --help's heading for these keys ("model", "outputs", "the sustained GEMM") */
  const opt_spec *v;
  int n;
} opt_table;

#define OPT_MAX_PARTS 12
#define OPT_HASH_VALUE_MAX 16400 /* longer than the longest text field (compare's sides) */
#define OPT_MAX_KEYS 160

/* One subcommand's options: tables over structs, and where each value came from. */
typedef struct opt_set {
  const char *command;  /* "accept", ...; NULL for the run (its section is any that names no subcommand) */
  struct {
    const opt_table *table;
    void *base; /* the struct the table's offsets are into */
  } part[OPT_MAX_PARTS];
  int nparts, nkeys;
  /* filled by opt_parse */
  int help, version;             /* -h/--help, --version were given */
  char config_file[1024];
  char command_line[4096];        /* argv joined by spaces (provenance) */
  unsigned char src[OPT_MAX_KEYS]; /* OPT_SRC_* per key, in table order */
  int line[OPT_MAX_KEYS];          /* the file's line for OPT_SRC_FILE */
} opt_set;

enum { OPT_SRC_DEFAULT = 0, OPT_SRC_FILE, OPT_SRC_CLI };

/* Starts a set for `command` (NULL: the run). */
void opt_set_init(opt_set *s, const char *command);
/* Adds a table over the struct at base. DDP_ERR_INTERNAL when the set is full or a key is already taken. */
ddp_result opt_set_add(opt_set *s, const opt_table *t, void *base);
/* Every key set to its default (the structs are zeroed first, part by part; see opt_set_add). */
ddp_result opt_defaults(opt_set *s);

/* The command line argv[1..] (argv[0] is the subcommand, or the program for the run) over defaults and the
 * --config file. others: the sets of the other subcommands (NULL-terminated, may be NULL), whose sections of
 * the file are checked against their keys. Stops at -h/--help and --version (s->help, s->version set,
 * DDP_OK). On bad input: one line through ddp_usage_error and DDP_ERR_USAGE. */
ddp_result opt_parse(opt_set *s, int argc, char **argv, opt_set *const *others);
/* Sets one key from text, as the file and the command line do (where: "--hidden", "file.ini:12"); marks it
 * given from src. */
ddp_result opt_apply(opt_set *s, const char *key, const char *value, const char *where, int src, int line);

/* "file.ini:7" or "--key" for where key's value came from; NULL for a built-in default or an unknown key. */
const char *opt_where(const opt_set *s, const char *key, char *buf, size_t n);
/* 1 when key was set by the file or the command line. */
int opt_given(const opt_set *s, const char *key);
/* Like opt_key_at, with what the ranks must agree on: for an OPT_INPUT key that names a file, the value is
 * followed by " (contents fnv1a64 0123456789abcdef)" or " (unreadable: why)". */
int opt_key_agreed(const opt_set *s, int i, const char **key, char *value, size_t n, const opt_spec **spec);
/* FNV-1a 64 of "key=value\n" (opt_key_agreed's value) for every key without OPT_NO_HASH: equal on ranks that
 * run the same options on the same input files. */
uint64_t opt_hash(const opt_set *s);
/* Key i of the set (0 past the end) with its effective value as text, its spec in *spec (may be NULL). */
int opt_key_at(const opt_set *s, int i, const char **key, char *value, size_t n, const opt_spec **spec);

/* --help: the usage lines, then each heading once, with the keys of every table of that heading under it
 * (--key ARG and the help wrapped at 100 columns, "(default ...)" and the choices); then --config, --help,
 * --version. */
void opt_help(const opt_set *s, FILE *out, const char *usage, const char *about);

/* text, each line longer than 100 columns wrapped at a space (continuations keep the line's indent). */
void opt_print_wrapped(FILE *out, const char *text);
/* The text of a value as the table prints it, for messages ("true", "0.5", "fp32"). */
void opt_format(const opt_spec *k, const void *field, char *out, size_t n);

/* OPT_CUSTOM parse and format of a duration over a double of seconds: "90" or "90s", "30m", "4h", "1h30m",
 * "2.5h" (units s, m, h, d, largest first, each at most once); negative, NaN or above 1e9 s refused. */
int opt_duration_parse(void *field, const char *value, char *err, size_t errn);
void opt_duration_format(const void *field, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
