/* options.c: the option layer (options.h): keys found across a set's tables, values parsed from text (the
 * defaults too, so that --help prints exactly what runs), the INI file through ini_file.c, the command line,
 * --help. Never touches MPI or a device; every error is one line naming the key and where it came from. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ini_file.h"
#include "input_file.h"

/* ---- keys -------------------------------------------------------------------------------------------- */
typedef struct {
  const opt_spec *k;
  void *field;
  int index; /* in the set's src[] and line[] */
} key_ref;

static int key_ref_at(const opt_set *s, int i, key_ref *out) {
  int base = 0;
  for (int p = 0; p < s->nparts; p++) {
    const opt_table *t = s->part[p].table;
    if (i < base + t->n) {
      out->k = &t->v[i - base];
      out->field = (char *)s->part[p].base + out->k->offset;
      out->index = i;
      return 1;
    }
    base += t->n;
  }
  return 0;
}

/* "min-bytes" and "min_bytes" are the same name. */
static int name_eq(const char *a, size_t na, const char *b, size_t nb) {
  if (na != nb) return 0;
  for (size_t i = 0; i < na; i++) {
    char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
    if (x != y) return 0;
  }
  return 1;
}

static int spec_named(const opt_spec *k, const char *name, size_t n) {
  if (name_eq(k->key, strlen(k->key), name, n)) return 1;
  for (const char *p = k->aliases; p && *p;) {
    size_t len = strcspn(p, "|");
    if (name_eq(p, len, name, n)) return 1;
    p += len;
    if (*p) p++;
  }
  return 0;
}

static int key_lookup(const opt_set *s, const char *name, size_t n, key_ref *out) {
  key_ref r;
  for (int i = 0; key_ref_at(s, i, &r); i++)
    if (spec_named(r.k, name, n)) return *out = r, 1;
  return 0;
}

static int key_short(const opt_set *s, char c, key_ref *out) {
  key_ref r;
  for (int i = 0; c && key_ref_at(s, i, &r); i++)
    if (r.k->shrt == c) return *out = r, 1;
  return 0;
}

void opt_set_init(opt_set *s, const char *command) {
  memset(s, 0, sizeof *s);
  s->command = command;
}

ddp_result opt_set_add(opt_set *s, const opt_table *t, void *base) {
  if (s->nparts == OPT_MAX_PARTS || s->nkeys + t->n > OPT_MAX_KEYS)
    return DDP_FAIL(DDP_ERR_INTERNAL, "option set %s: more than %d tables or %d keys", s->command ? s->command : "run",
                    OPT_MAX_PARTS, OPT_MAX_KEYS);
  for (int i = 0; i < t->n; i++) {
    key_ref r;
    if (key_lookup(s, t->v[i].key, strlen(t->v[i].key), &r) || key_short(s, t->v[i].shrt, &r))
      return DDP_FAIL(DDP_ERR_INTERNAL, "option set %s: key %s is defined twice", s->command ? s->command : "run",
                      t->v[i].key);
  }
  s->part[s->nparts].table = t;
  s->part[s->nparts].base = base;
  s->nparts++;
  s->nkeys += t->n;
  return DDP_OK;
}

/* ---- values ------------------------------------------------------------------------------------------ */
/* Index of value in "a|b|c", -1 if absent ("-" entries are placeholders that never match). */
static int choice_index(const char *choices, const char *value) {
  size_t n = strlen(value);
  int idx = 0;
  for (const char *p = choices; *p; idx++) {
    size_t len = strcspn(p, "|");
    if (len == n && strncmp(p, value, n) == 0 && strcmp(value, "-") != 0) return idx;
    p += len;
    if (!*p) break;
    p++;
  }
  return -1;
}

/* k's choices as "a|b|c" (placeholders left out). */
static const char *choices_text(const opt_spec *k, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = 0;
  if (k->choice) {
    const char *name;
    for (int i = 0; k->choice(i, &name) >= 0 && o < n; i++)
      o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? "|" : "", name);
    return buf;
  }
  for (const char *p = k->choices ? k->choices : ""; *p && o < n;) {
    size_t len = strcspn(p, "|");
    if (!(len == 1 && *p == '-')) o += (size_t)snprintf(buf + o, n - o, "%s%.*s", o ? "|" : "", (int)len, p);
    p += len;
    if (*p) p++;
  }
  return buf;
}

static int enum_value(const opt_spec *k, const char *value) {
  if (!k->choice) return choice_index(k->choices, value);
  const char *name;
  for (int i = 0, v; (v = k->choice(i, &name)) >= 0; i++)
    if (strcmp(name, value) == 0) return v;
  return -1;
}

static void enum_name(const opt_spec *k, int v, char *out, size_t n) {
  if (k->choice) {
    const char *name;
    for (int i = 0, w; (w = k->choice(i, &name)) >= 0; i++)
      if (w == v) {
        snprintf(out, n, "%s", name);
        return;
      }
    snprintf(out, n, "?");
    return;
  }
  const char *p = k->choices;
  for (int i = 0; i < v && p; i++) {
    p = strchr(p, '|');
    if (p) p++;
  }
  if (!p) {
    snprintf(out, n, "?");
    return;
  }
  snprintf(out, n, "%.*s", (int)strcspn(p, "|"), p);
}

/* "1048576", "64K", "32M", "8G" (1024-based, as nccl-tests); whole bytes only. */
static int parse_size(const char *v, size_t *out) {
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (end == v || errno || !isfinite(x) || x < 0) return 0;
  double mult = 1;
  if (*end) {
    switch (toupper((unsigned char)*end)) {
      case 'K': mult = 1024.0; break;
      case 'M': mult = 1048576.0; break;
      case 'G': mult = 1073741824.0; break;
      case 'T': mult = 1099511627776.0; break;
      default: return 0;
    }
    end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return 0;
  }
  x *= mult;
  if (x != floor(x) || x > 9.0e18) return 0;
  *out = (size_t)x;
  return 1;
}

static int parse_bool(const char *v) {
  static const char *yes[] = {"true", "1", "yes", "on"}, *no[] = {"false", "0", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(v, yes[i]) == 0) return 1;
    if (strcasecmp(v, no[i]) == 0) return 0;
  }
  return -1;
}

static int has_range(const opt_spec *k) { return k->min != 0 || k->max != 0 || (k->flags & OPT_FIXED); }

/* Sets the field from text; on bad input "KEY must be ..." into err and -1. */
static int value_set(const opt_spec *k, void *field, const char *value, char *err, size_t errn) {
  char *end = NULL;
  errno = 0;
  switch (k->type) {
    case OPT_INT: {
      long v = strtol(value, &end, 10);
      if (end == value || *end || errno || v < INT_MIN || v > INT_MAX)
        return snprintf(err, errn, "%s must be an integer, got '%s'", k->key, value), -1;
      if (has_range(k) && (v < (long)k->min || v > (long)k->max)) {
        if (k->min == k->max)
          return snprintf(err, errn, "%s %ld is not supported (only %.0f)", k->key, v, k->min), -1;
        return snprintf(err, errn, "%s must be in [%.0f, %.0f], got %ld", k->key, k->min, k->max, v), -1;
      }
      *(int *)field = (int)v;
      return 0;
    }
    case OPT_U64: {
      const char *v0 = value;
      while (isspace((unsigned char)*v0)) v0++; /* strtoull would skip it and then negate a '-' */
      if (v0[0] == '-')
        return snprintf(err, errn, "%s must be a non-negative integer, got '%s'", k->key, value), -1;
      unsigned long long v = strtoull(value, &end, 0);
      if (end == value || *end || errno)
        return snprintf(err, errn, "%s must be a non-negative integer, got '%s'", k->key, value), -1;
      *(unsigned long long *)field = v;
      return 0;
    }
    case OPT_DOUBLE: {
      double v = strtod(value, &end);
      if (end == value || *end || errno || !isfinite(v))
        return snprintf(err, errn, "%s must be a number, got '%s'", k->key, value), -1;
      if (has_range(k) && (v < k->min || v > k->max))
        return snprintf(err, errn, "%s must be in [%g, %g], got %g", k->key, k->min, k->max, v), -1;
      *(double *)field = v;
      return 0;
    }
    case OPT_BOOL: {
      int v = parse_bool(value);
      if (v < 0) return snprintf(err, errn, "%s must be true or false, got '%s'", k->key, value), -1;
      *(int *)field = v;
      return 0;
    }
    case OPT_ENUM: {
      int v = enum_value(k, value);
      if (v < 0) {
        char list[256];
        return snprintf(err, errn, "%s must be one of %s, got '%s'", k->key, choices_text(k, list, sizeof list), value), -1;
      }
      *(int *)field = v;
      return 0;
    }
    case OPT_STR:
      if (strlen(value) >= k->size)
        return snprintf(err, errn, "%s is longer than %zu characters", k->key, k->size - 1), -1;
      memcpy(field, value, strlen(value) + 1);
      /* a listed value: its commas separate files, stored as operands are (one name a line); a value that
       * already holds a newline is that stored form (as opt_format prints it), whose names keep their commas */
      if ((k->flags & OPT_FILES) && !strchr(field, '\n'))
        for (char *p = field; *p; p++)
          if (*p == ',') *p = '\n';
      return 0;
    case OPT_SIZE: {
      size_t v;
      if (!parse_size(value, &v))
        return snprintf(err, errn, "%s must be a whole number of bytes (K, M, G: 1024-based), got '%s'", k->key, value), -1;
      if (has_range(k) && ((double)v < k->min || (double)v > k->max))
        return snprintf(err, errn, "%s must be in [%.0f, %.0f] bytes, got %zu", k->key, k->min, k->max, v), -1;
      *(size_t *)field = v;
      return 0;
    }
    case OPT_CUSTOM: {
      char why[400] = "";
      if (k->parse(field, value, why, sizeof why) != 0)
        return snprintf(err, errn, "%s must be %s, got '%s'", k->key, why[0] ? why : "valid", value), -1;
      return 0;
    }
  }
  return snprintf(err, errn, "%s: unknown type", k->key), -1;
}

void opt_format(const opt_spec *k, const void *field, char *out, size_t n) {
  switch (k->type) {
    case OPT_INT: snprintf(out, n, "%d", *(const int *)field); break;
    case OPT_U64: snprintf(out, n, "%llu", *(const unsigned long long *)field); break;
    case OPT_DOUBLE: /* the shortest text that reads back to the same double */
      for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, *(const double *)field);
        if (strtod(out, NULL) == *(const double *)field) break;
      }
      break;
    case OPT_BOOL: snprintf(out, n, "%s", *(const int *)field ? "true" : "false"); break;
    case OPT_ENUM: enum_name(k, *(const int *)field, out, n); break;
    case OPT_STR: /* a file list of one name with a comma ends with a newline, so that it reads back as one name */
      snprintf(out, n, "%s%s", (const char *)field,
               (k->flags & OPT_FILES) && strchr(field, ',') && !strchr(field, '\n') ? "\n" : "");
      break;
    case OPT_SIZE: snprintf(out, n, "%zu", *(const size_t *)field); break;
    case OPT_CUSTOM: k->format(field, out, n); break;
  }
}

/* ---- the set ----------------------------------------------------------------------------------------- */
static const char *cmd_name(const opt_set *s) { return s->command ? s->command : ""; }

/* "accept: " before a subcommand's messages, nothing for the run's. */
static const char *cmd_prefix(const opt_set *s, char *buf, size_t n) {
  snprintf(buf, n, "%s%s", cmd_name(s), s->command ? ": " : "");
  return buf;
}

static const char *help_hint(const opt_set *s, char *buf, size_t n) {
  snprintf(buf, n, "ddpbench%s%s --help lists them", s->command ? " " : "", cmd_name(s));
  return buf;
}

ddp_result opt_defaults(opt_set *s) {
  key_ref r;
  for (int i = 0; key_ref_at(s, i, &r); i++) {
    char err[512];
    if (value_set(r.k, r.field, r.k->def ? r.k->def : "", err, sizeof err) != 0)
      return DDP_FAIL(DDP_ERR_INTERNAL, "the default of %s does not parse: %s", r.k->key, err);
    s->src[i] = OPT_SRC_DEFAULT;
    s->line[i] = 0;
  }
  return DDP_OK;
}

ddp_result opt_apply(opt_set *s, const char *key, const char *value, const char *where, int src, int line) {
  key_ref r;
  char pre[64], hint[96];
  if (!key_lookup(s, key, strlen(key), &r))
    return ddp_usage_error("%s%s: unknown key '%s' (%s)", cmd_prefix(s, pre, sizeof pre), where, key,
                           help_hint(s, hint, sizeof hint));
  char err[700];
  if (value_set(r.k, r.field, value, err, sizeof err) != 0)
    return ddp_usage_error("%s%s: %s", cmd_prefix(s, pre, sizeof pre), where, err);
  s->src[r.index] = (unsigned char)src;
  s->line[r.index] = line;
  return DDP_OK;
}

int opt_given(const opt_set *s, const char *key) {
  key_ref r;
  return key_lookup(s, key, strlen(key), &r) && s->src[r.index] != OPT_SRC_DEFAULT;
}

const char *opt_where(const opt_set *s, const char *key, char *buf, size_t n) {
  key_ref r;
  if (!key_lookup(s, key, strlen(key), &r) || s->src[r.index] == OPT_SRC_DEFAULT) return NULL;
  if (s->src[r.index] == OPT_SRC_FILE) {
    snprintf(buf, n, "%s:%d", s->config_file, s->line[r.index]);
    return buf;
  }
  snprintf(buf, n, "--%s", r.k->key);
  for (char *p = buf; *p; p++)
    if (*p == '_') *p = '-';
  return buf;
}

int opt_key_at(const opt_set *s, int i, const char **key, char *value, size_t n, const opt_spec **spec) {
  key_ref r;
  if (!key_ref_at(s, i, &r)) return 0;
  *key = r.k->key;
  opt_format(r.k, r.field, value, n);
  if (spec) *spec = r.k;
  return 1;
}

static void input_digest(const char *path, char *value, size_t n) {
  size_t have = strlen(value), len = 0;
  char why[300] = "";
  char *text = input_file_read(path, INPUT_MAX_RESULT, &len, why, sizeof why);
  if (!text && strchr(path, ',')) { /* a list of files (accept --baseline a.json,b.json): each one's contents */
    char *names = strdup(path);
    uint64_t h = DDP_FNV1A64_INIT;
    int ok = names != NULL;
    for (char *save = NULL, *t = names ? strtok_r(names, ",", &save) : NULL; ok && t; t = strtok_r(NULL, ",", &save)) {
      char *one = input_file_read(t, INPUT_MAX_RESULT, &len, why, sizeof why);
      ok = one != NULL;
      if (one) h = ddp_fnv1a64(one, len, h);
      free(one);
    }
    free(names);
    if (ok) snprintf(value + have, n - have, " (contents fnv1a64 %016llx)", (unsigned long long)h);
    else snprintf(value + have, n - have, " (unreadable: %s)", why);
    return;
  }
  if (text)
    snprintf(value + have, n - have, " (contents fnv1a64 %016llx)",
             (unsigned long long)ddp_fnv1a64(text, len, DDP_FNV1A64_INIT));
  else
    snprintf(value + have, n - have, " (unreadable: %s)", why);
  free(text);
}

int opt_key_agreed(const opt_set *s, int i, const char **key, char *value, size_t n, const opt_spec **spec) {
  const opt_spec *k;
  if (!opt_key_at(s, i, key, value, n, &k)) return 0;
  if ((k->flags & OPT_INPUT) && k->type == OPT_STR && value[0]) input_digest(value, value, n);
  if (spec) *spec = k;
  return 1;
}

uint64_t opt_hash(const opt_set *s) {
  uint64_t h = DDP_FNV1A64_INIT;
  const char *key;
  const opt_spec *k;
  char value[OPT_HASH_VALUE_MAX];
  for (int i = 0; opt_key_agreed(s, i, &key, value, sizeof value, &k); i++) {
    if (k->flags & OPT_NO_HASH) continue;
    h = ddp_fnv1a64(key, strlen(key), h);
    h = ddp_fnv1a64("=", 1, h);
    h = ddp_fnv1a64(value, strlen(value), h);
    h = ddp_fnv1a64("\n", 1, h);
  }
  return h;
}

/* ---- the INI file ------------------------------------------------------------------------------------ */
typedef struct {
  opt_set *own;
  opt_set *const *others;
} file_ctx;

static int is_command_section(const file_ctx *c, const char *section) {
  if (c->own->command && strcmp(section, c->own->command) == 0) return 1;
  for (int i = 0; c->others && c->others[i]; i++)
    if (c->others[i]->command && strcmp(section, c->others[i]->command) == 0) return 1;
  return 0;
}

/* The set a section's keys belong to: the subcommand it names, or the run's for any other section. NULL when
 * that set is not at hand (its keys are then not checked). */
static opt_set *section_set(const file_ctx *c, const char *section) {
  int named = is_command_section(c, section);
  if (named ? c->own->command && !strcmp(section, c->own->command) : !c->own->command) return c->own;
  for (int i = 0; c->others && c->others[i]; i++) {
    opt_set *o = c->others[i];
    if (named ? o->command && !strcmp(section, o->command) : !o->command) return o;
  }
  return NULL;
}

/* Which other set has this key, for the hint in an error. */
static const char *key_owner(const file_ctx *c, const char *name, const opt_set *except) {
  opt_set *all[OPT_MAX_PARTS + 2];
  int n = 0;
  all[n++] = c->own;
  for (int i = 0; c->others && c->others[i] && n < OPT_MAX_PARTS + 1; i++) all[n++] = c->others[i];
  for (int i = 0; i < n; i++) {
    key_ref r;
    if (all[i] != except && key_lookup(all[i], name, strlen(name), &r)) return all[i]->command ? all[i]->command : "";
  }
  return NULL;
}

static int file_on_key(void *user, const char *section, const char *name, const char *value, int line, char *err,
                       size_t errn) {
  file_ctx *c = user;
  if (strcmp(name, "config") == 0) return snprintf(err, errn, "key 'config' is not allowed inside a config file"), 1;
  if (strchr(name, '-')) {
    char u[128];
    snprintf(u, sizeof u, "%s", name);
    for (char *q = u; *q; q++)
      if (*q == '-') *q = '_';
    return snprintf(err, errn, "unknown key '%s' (in a file keys are written with underscores: %s)", name, u), 1;
  }
  opt_set *s = section_set(c, section);
  if (!s) return 0;
  key_ref r;
  if (!key_lookup(s, name, strlen(name), &r)) {
    const char *owner = key_owner(c, name, s);
    char where[96] = "";
    if (section[0]) snprintf(where, sizeof where, " in [%s]", section);
    if (owner)
      return snprintf(err, errn, "unknown key '%s'%s: it is a key of %s%s, in %s%s%s", name, where,
                      owner[0] ? "ddpbench " : "the run", owner, owner[0] ? "[" : "a section like [", owner[0] ? owner : "run",
                      "]"), 1;
    char hint[96];
    return snprintf(err, errn, "unknown key '%s'%s (%s)", name, where, help_hint(s, hint, sizeof hint)), 1;
  }
  char why[700];
  if (value_set(r.k, r.field, value, why, sizeof why) != 0) return snprintf(err, errn, "%s", why), 1;
  s->src[r.index] = OPT_SRC_FILE;
  s->line[r.index] = line;
  return 0;
}

static ddp_result load_file(opt_set *s, opt_set *const *others) {
  char err[900];
  for (int i = 0; others && others[i]; i++) snprintf(others[i]->config_file, sizeof others[i]->config_file, "%s", s->config_file);
  file_ctx c = {s, others};
  int line = ini_file_parse_path(s->config_file, INPUT_MAX_INI, file_on_key, &c, err, sizeof err);
  char pre[64];
  if (line < 0) return ddp_usage_error("%s--config %s: %s", cmd_prefix(s, pre, sizeof pre), s->config_file, err);
  if (line > 0) return ddp_usage_error("%s%s:%d: %s", cmd_prefix(s, pre, sizeof pre), s->config_file, line, err);
  return DDP_OK;
}

/* ---- the command line -------------------------------------------------------------------------------- */
/* A word that is an option, not a value: --key, or -k (a dash and a letter: -1 and - are values). */
static int is_option_word(const char *a) {
  return a[0] == '-' && ((a[1] == '-' && a[2]) || isalpha((unsigned char)a[1]));
}

/* The operand keys of the set, in order: the first takes the words before "--", the second those after. */
static int operand_key(const opt_set *s, int which, key_ref *out) {
  key_ref r;
  for (int i = 0, seen = 0; key_ref_at(s, i, &r); i++)
    if ((r.k->flags & OPT_OPERANDS) && r.k->type == OPT_STR && seen++ == which) return *out = r, 1;
  return 0;
}

static ddp_result operand_add(opt_set *s, const char *word, int after_sep, int *cleared) {
  key_ref r;
  char pre[64], hint[96];
  if (!operand_key(s, after_sep, &r))
    return ddp_usage_error("%sunexpected argument '%s' (options are --key value; %s)", cmd_prefix(s, pre, sizeof pre),
                           word, help_hint(s, hint, sizeof hint));
  char *f = r.field;
  if (!cleared[after_sep] && s->src[r.index] == OPT_SRC_CLI)
    return ddp_usage_error("%s%s given both as --%s and as operands ('%s'): give one", cmd_prefix(s, pre, sizeof pre),
                           r.k->key, r.k->key, word);
  if (!cleared[after_sep]) f[0] = 0, cleared[after_sep] = 1; /* operands replace the file's value */
  size_t have = strlen(f), add = strlen(word);
  if (have + add + 2 > r.k->size)
    return ddp_usage_error("%s%s: more than %zu characters of operands", cmd_prefix(s, pre, sizeof pre), r.k->key,
                           r.k->size - 1);
  if (have) f[have++] = (r.k->flags & OPT_FILES) ? '\n' : ',';
  memcpy(f + have, word, add + 1);
  s->src[r.index] = OPT_SRC_CLI;
  return DDP_OK;
}

ddp_result opt_parse(opt_set *s, int argc, char **argv, opt_set *const *others) {
  s->help = s->version = 0;
  s->config_file[0] = 0;
  size_t o = 0;
  s->command_line[0] = 0;
  for (int i = 0; i < argc && o + 2 < sizeof s->command_line; i++) {
    int w = snprintf(s->command_line + o, sizeof s->command_line - o, "%s%s", i ? " " : "", argv[i]);
    if (w < 0) break;
    o += (size_t)w;
  }
  for (int i = 0; others && others[i]; i++) DDP_TRY(opt_defaults(others[i]));
  DDP_TRY(opt_defaults(s));
  char pre[64], hint[96];
  cmd_prefix(s, pre, sizeof pre);
  /* Pass 1: help and version win over everything; then the config file, which the command line overrides. */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return s->help = 1, DDP_OK;
    if (!strcmp(argv[i], "--version")) return s->version = 1, DDP_OK;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--config", 8) != 0 || (a[8] != 0 && a[8] != '=')) continue;
    const char *v = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : NULL;
    if (!v || !*v) return ddp_usage_error("%s--config needs a file name", pre);
    if (a[8] != '=' && is_option_word(v)) return ddp_usage_error("%s--config needs a file name, got the option '%s'", pre, v);
    if (strlen(v) >= sizeof s->config_file)
      return ddp_usage_error("%s--config: file name longer than %zu characters", pre, sizeof s->config_file - 1);
    if (s->config_file[0])
      return ddp_usage_error("%s--config given twice (%s, then %s): give one file", pre, s->config_file, v);
    snprintf(s->config_file, sizeof s->config_file, "%s", v);
  }
  if (s->config_file[0]) DDP_TRY(load_file(s, others));
  /* Pass 2: every other word, in order. */
  int after_sep = 0, cleared[2] = {0, 0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      key_ref r;
      if (!operand_key(s, 1, &r)) return ddp_usage_error("%sunexpected argument '--' (%s)", pre, help_hint(s, hint, sizeof hint));
      if (after_sep) return ddp_usage_error("%s'--' given twice (it separates the two sides once)", pre);
      after_sep = 1;
      continue;
    }
    if (a[0] != '-' || !strcmp(a, "-")) { /* an operand */
      DDP_TRY(operand_add(s, a, after_sep, cleared));
      continue;
    }
    key_ref r;
    const char *value = NULL;
    char where[160];
    if (a[1] == '-') { /* --key, --key=value */
      const char *name = a + 2, *eq = strchr(name, '=');
      size_t n = eq ? (size_t)(eq - name) : strlen(name);
      snprintf(where, sizeof where, "--%.*s", (int)(n < 120 ? n : 120), name);
      if (name_eq(name, n, "config", 6)) {
        if (!eq) i++;
        continue;
      }
      if (!key_lookup(s, name, n, &r)) return ddp_usage_error("%sunknown option '%s' (%s)", pre, where, help_hint(s, hint, sizeof hint));
      if (eq) value = eq + 1;
    } else { /* -k value, -kvalue */
      snprintf(where, sizeof where, "-%c", a[1]);
      if (!key_short(s, a[1], &r)) return ddp_usage_error("%sunknown option '%.120s' (%s)", pre, a, help_hint(s, hint, sizeof hint));
      if (a[2]) value = a + 2;
    }
    if (!value && r.k->type == OPT_BOOL) {
      /* --key true|false takes the next word only when it is exactly one of those */
      if (i + 1 < argc && (!strcmp(argv[i + 1], "true") || !strcmp(argv[i + 1], "false"))) value = argv[++i];
      else value = "true";
    } else if (!value) {
      if (i + 1 >= argc) return ddp_usage_error("%s%s needs a value", pre, where);
      value = argv[++i];
      if (is_option_word(value)) /* "--json --force" would otherwise create a file named --force */
        return ddp_usage_error("%s%s needs a value, got the option '%s' (write %s=%s if you mean it)", pre, where, value,
                               where, value);
    }
    for (int w = 0; w < 2 && (r.k->flags & OPT_OPERANDS); w++) {
      key_ref op;
      if (cleared[w] && operand_key(s, w, &op) && op.index == r.index)
        return ddp_usage_error("%s%s given both as %s and as operands: give one", pre, r.k->key, where);
    }
    if (!value[0] && r.k->type == OPT_STR && (r.k->flags & (OPT_OUTPUT | OPT_OUTDIR | OPT_INPUT | OPT_FILES)))
      return ddp_usage_error("%s%s needs a file name, got an empty word (leave the option out for none)", pre, where);
    char err[700];
    if (value_set(r.k, r.field, value, err, sizeof err) != 0) return ddp_usage_error("%s%s: %s", pre, where, err);
    s->src[r.index] = OPT_SRC_CLI;
    s->line[r.index] = 0;
  }
  return DDP_OK;
}

/* ---- --help ------------------------------------------------------------------------------------------ */
#define HELP_COLS 100
#define HELP_LEFT 30

static const char *placeholder(const opt_spec *k, char *buf, size_t n) {
  if (k->arg) return snprintf(buf, n, "%s", k->arg), buf;
  switch (k->type) {
    case OPT_INT:
    case OPT_U64: return "N";
    case OPT_DOUBLE: return "X";
    case OPT_BOOL: return "";
    case OPT_ENUM: {
      char list[200];
      choices_text(k, list, sizeof list);
      if (strlen(list) <= 24) return snprintf(buf, n, "%s", list), buf;
      return "NAME";
    }
    case OPT_STR: return "TEXT";
    case OPT_SIZE: return "BYTES";
    case OPT_CUSTOM: return "VALUE";
  }
  return "";
}

/* Writes text wrapped to the columns after `left`, the first line continuing where the caller stopped. */
static void wrap(FILE *out, const char *text, int col, int left) {
  const char *p = text;
  while (*p) {
    int room = HELP_COLS - col;
    size_t len = strlen(p);
    if ((int)len <= room) {
      fputs(p, out);
      break;
    }
    int cut = room;
    while (cut > 0 && p[cut] != ' ') cut--;
    if (cut <= 0) { /* one word longer than the room: break after it */
      cut = (int)strcspn(p, " ");
    }
    fwrite(p, 1, (size_t)cut, out);
    p += cut;
    while (*p == ' ') p++;
    if (*p) fprintf(out, "\n%*s", left, "");
    col = left;
  }
  fputc('\n', out);
}

static void help_key(FILE *out, const opt_spec *k) {
  char lhs[160], ph[64], text[1200], list[256], def[160];
  const char *pl = placeholder(k, ph, sizeof ph);
  int o = snprintf(lhs, sizeof lhs, "  ");
  if (k->shrt) o += snprintf(lhs + o, sizeof lhs - (size_t)o, "-%c, ", k->shrt);
  o += snprintf(lhs + o, sizeof lhs - (size_t)o, "--");
  for (const char *p = k->key; *p && o + 2 < (int)sizeof lhs; p++) lhs[o++] = *p == '_' ? '-' : *p;
  lhs[o] = 0;
  if (pl[0]) snprintf(lhs + o, sizeof lhs - (size_t)o, " %s", pl);
  if (k->type == OPT_BOOL) snprintf(def, sizeof def, "default %s", k->def && parse_bool(k->def) == 1 ? "true" : "false");
  else if (!k->def || !k->def[0]) snprintf(def, sizeof def, "default none");
  else snprintf(def, sizeof def, "default %s", k->def);
  if (k->type == OPT_ENUM && strcmp(pl, choices_text(k, list, sizeof list)) != 0)
    snprintf(text, sizeof text, "%s: %s (%s)", k->help, list, def);
  else
    snprintf(text, sizeof text, "%s (%s)", k->help, def);
  int col = (int)strlen(lhs);
  fputs(lhs, out);
  if (col >= HELP_LEFT - 1) {
    fprintf(out, "\n%*s", HELP_LEFT, "");
  } else {
    fprintf(out, "%*s", HELP_LEFT - col, "");
  }
  wrap(out, text, HELP_LEFT, HELP_LEFT);
}

void opt_print_wrapped(FILE *out, const char *text) {
  for (const char *p = text; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
    int indent = (int)strspn(line, " ");
    int hang = indent + (line[indent] == '-' || line[indent] == '+' ? 2 : 0);
    const char *gap = indent ? strstr(line + indent, "  ") : NULL; /* "  name   text": continue under text */
    if (gap && !memchr(line + indent, ' ', (size_t)(gap - line - indent))) hang = (int)(gap - line) + (int)strspn(gap, " ");
    fprintf(out, "%*s", indent, "");
    wrap(out, line + indent, indent, hang);
    p = e ? e + 1 : NULL;
  }
}

static const char *help_group(const opt_table *t) { return t->group ? t->group : "options"; }

void opt_help(const opt_set *s, FILE *out, const char *usage, const char *about) {
  if (usage) opt_print_wrapped(out, usage);
  if (about) {
    fputc('\n', out);
    opt_print_wrapped(out, about);
  }
  /* One section per heading, where its first table is: tables that share a heading (the skeleton's --quiet
   * joins the outputs table of a subcommand) list their keys under it together, never under a second copy. */
  for (int p = 0; p < s->nparts; p++) {
    const char *group = help_group(s->part[p].table);
    int seen = 0;
    for (int q = 0; q < p && !seen; q++) seen = !strcmp(help_group(s->part[q].table), group);
    if (seen) continue;
    int shown = 0;
    for (int q = p; q < s->nparts; q++) {
      const opt_table *t = s->part[q].table;
      if (strcmp(help_group(t), group)) continue;
      for (int i = 0; i < t->n; i++) {
        if (t->v[i].flags & OPT_HIDDEN) continue;
        if (!shown++) fprintf(out, "\n%s:\n", group);
        help_key(out, &t->v[i]);
      }
    }
  }
  fprintf(out, "\ngeneral:\n");
  char text[300];
  snprintf(text, sizeof text, "read the keys above from an INI file first: 'key = value' lines in %s%s%s; the "
           "command line wins", s->command ? "[" : "any section not named after a subcommand (", s->command ? s->command : "[model], [run], ...",
           s->command ? "]" : ")");
  fprintf(out, "  %-*s", HELP_LEFT - 2, "--config FILE");
  wrap(out, text, HELP_LEFT, HELP_LEFT);
  fprintf(out, "  %-*s", HELP_LEFT - 2, "-h, --help");
  wrap(out, "this text", HELP_LEFT, HELP_LEFT);
  fprintf(out, "  %-*s", HELP_LEFT - 2, "--version");
  wrap(out, "print the version and exit", HELP_LEFT, HELP_LEFT);
}

/* ---- durations ---- */
int opt_duration_parse(void *field, const char *value, char *err, size_t errn) {
  static const struct {
    char unit;
    double s;
  } U[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
  const char *p = value;
  double total = 0;
  int next = 0, parts = 0;
  while (*p) {
    char *end = NULL;
    if (!(*p >= '0' && *p <= '9') && *p != '.') break;
    double v = strtod(p, &end);
    if (end == p || !isfinite(v) || v < 0) break;
    if (strcspn(p, "xXpP") < (size_t)(end - p)) break; /* strtod's hexadecimal ("0x10"): not a duration */
    p = end;
    if (!*p) { /* a bare number: seconds, and only as the whole value or its last part */
      if (next > 3) break;
      total += v, parts++;
      next = 4;
      continue;
    }
    int u = next;
    while (u < 4 && U[u].unit != *p) u++;
    if (u == 4) break;
    total += v * U[u].s, parts++;
    next = u + 1;
    p++;
  }
  if (*p || !parts || !(total <= 1e9)) {
    snprintf(err, errn, "a duration such as 90s, 30m, 4h or 1h30m (units d, h, m, s, largest first)");
    return -1;
  }
  *(double *)field = total;
  return 0;
}

void opt_duration_format(const void *field, char *out, size_t n) {
  double v = *(const double *)field;
  if (v > 0 && v == floor(v) && fmod(v, 3600) == 0) snprintf(out, n, "%.0fh", v / 3600);
  else if (v > 0 && v == floor(v) && fmod(v, 60) == 0) snprintf(out, n, "%.0fm", v / 60);
  else snprintf(out, n, "%gs", v);
}
