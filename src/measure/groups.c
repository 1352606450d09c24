/* groups.c: the groups a user asked for (--groups, --group-measure): each kind's rounds built and the chosen
 * measurement run over them by the driver. */
#include "measure.h"

#include <stdio.h>

#include "progress.h"

/* ---- the groups a user asked for (--groups, --group-measure) ---------------------------------------- */
_Static_assert(GROUP_WORLD == 0 && GROUP_NODE == 1 && GROUP_PAIR == 2 && GROUP_FIRST == 3,
               "config_groups returns kinds in measure_group_kind's order");

ddp_result measure_groups_run(const measure_env *env, ddp_comm *world, result_doc *doc, const measurement **used,
                              int skip_world) {
  const ddp_config *cfg = env->cfg;
  const ddp_dist *d = env->dist;
  int kinds[CONFIG_MAX_GROUPS], ks[CONFIG_MAX_GROUPS];
  int n = config_groups(cfg, kinds, ks, CONFIG_MAX_GROUPS); /* validated by config_parse */
  if (used) *used = NULL;
  if (n <= 0) return n < 0 ? ddp_usage_error("--groups: '%s' is not a list of groups", cfg->groups) : DDP_OK;
  const measurement *m = measure_find(cfg->group_measure);
  if (!m) {
    char names[256];
    measure_names(names, sizeof names);
    return ddp_usage_error("--group-measure: no measurement '%s' (there are: %s)", cfg->group_measure, names);
  }
  for (int i = 0; i < n; i++)
    if (kinds[i] == GROUP_FIRST && ks[i] > d->size)
      return ddp_usage_error("--groups: first:%d is more ranks than the job's %d", ks[i], d->size);
  if (used) *used = m;
  int total = 0, at = 0; /* the groups that run, for the progress lines */
  for (int i = 0; i < n; i++) total += !(kinds[i] == GROUP_WORLD && skip_world);
  for (int i = 0; i < n; i++) {
    if (kinds[i] == GROUP_WORLD && skip_world) continue; /* its records exist: the same identities twice is wrong */
    measure_round *rounds = NULL;
    int nrounds = 0;
    static const char *kind_names[] = {"world", "node", "pairs", "first"};
    char label[64];
    if (kinds[i] == GROUP_FIRST) snprintf(label, sizeof label, "--groups first:%d, %s", ks[i], m->name);
    else snprintf(label, sizeof label, "--groups %s, %s", kind_names[kinds[i] & 3], m->name);
    progress_group(at++, total, label);
    ddp_result r = measure_rounds_build(d, world, (measure_group_kind)kinds[i], kinds[i] == GROUP_FIRST ? ks[i] : 0,
                                        &rounds, &nrounds);
    if (r == DDP_OK) r = measure_run(env, m, rounds, nrounds, doc);
    measure_rounds_free(rounds, nrounds);
    DDP_TRY(r);
  }
  progress_group_end();
  return DDP_OK;
}
