/* hw.c: from an hwloc topology (live or XML) to a topo_node: NVIDIA GPUs and NICs, the PCIe class of
 * every pair from the bridge chains, locality, NVLink counts from hwloc's NVLinkBandwidth matrix and from
 * NVML. Pure functions over the topology and plain structs, apart from topo_load (which loads a user's XML
 * in a forked child first, because libhwloc can crash on a malformed one); nothing here binds, prints, or
 * uses MPI. */
#include "topo.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "input_file.h"

/* ---- loading ---- */

/* hwloc 3.0 writes OS device types as a bitmask (storage 1, memory 2, GPU 4, coproc 8, network 16,
 * OpenFabrics 32, DMA 64); hwloc 2.x reads an enum (block 0, GPU 1, network 2, OpenFabrics 3, DMA 4,
 * coproc 5). */
static unsigned osdev_type_v2(unsigned long v3) {
  if (v3 & 3) return 0;
  if (v3 & 32) return 3;
  if (v3 & 16) return 2;
  if (v3 & 64) return 4;
  if (v3 & 4) return 1;
  if (v3 & 8) return 5;
  return 0;
}

/* Rewrites a hwloc 3.x XML buffer in place for a 2.x reader: the version attribute and OS device types
 * (both only ever shrink). Elements 2.x does not know (topology infos, PCI localities) it skips itself. */
static void xml_downgrade(char *xml) {
  char *v = strstr(xml, "<topology version=\"3.");
  if (!v) return;
  v[strlen("<topology version=\"")] = '2';
  static const char attr[] = "osdev_type=\"";
  const size_t alen = sizeof attr - 1;
  char *out = xml;
  for (char *in = xml; *in;) {
    char *after = NULL;
    if (!strncmp(in, attr, alen)) {
      unsigned long t = strtoul(in + alen, &after, 10);
      if (after != in + alen && *after == '"') {
        memmove(out, attr, alen); /* out <= in: the rewritten text is never longer */
        out[alen] = (char)('0' + osdev_type_v2(t));
        out += alen + 1;
        in = after;
        continue;
      }
    }
    *out++ = *in++;
  }
  *out = 0;
}

/* The whole file, NUL-terminated, in *out (caller frees): a regular file of at most INPUT_MAX_XML bytes. */
static ddp_result xml_read(const char *path, char **out) {
  char why[300];
  size_t len = 0;
  *out = input_file_read(path, INPUT_MAX_XML, &len, why, sizeof why);
  if (!*out) return ddp_usage_error("hwloc XML %s: %s", path, why);
  size_t nul = strlen(*out);
  if (nul != len) {
    free(*out);
    *out = NULL;
    return ddp_usage_error("hwloc XML %s: NUL byte at offset %zu: not an XML file", path, nul);
  }
  return DDP_OK;
}

/* Loads the XML text into a fresh topology with the filters every report uses; 0 or -1 (errno set), no
 * printing: the crash-isolation child runs it too. */
static int xml_topology_load(const char *xml, hwloc_topology_t *out) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return -1;
  if (hwloc_topology_set_xmlbuffer(topo, xml, (int)strlen(xml) + 1) != 0 ||
      hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0 ||
      hwloc_topology_load(topo) != 0) {
    int e = errno;
    hwloc_topology_destroy(topo);
    errno = e;
    return -1;
  }
  *out = topo;
  return 0;
}

/* libhwloc can crash on a malformed XML (hwloc 2.9: a segfault inside hwloc_topology_load). A user-given file
 * is therefore loaded first in a forked child, with a time limit; only when the child loaded it cleanly does
 * this process load it. Returns 0 when the child succeeded; else -1 with what happened in why. */
static int xml_load_isolated(const char *xml, char *why, size_t n) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return snprintf(why, n, "fork: %s", strerror(errno)), -1;
  if (pid == 0) {
    /* Die of the signal itself: no handler of ours or of a sanitizer may turn a crash into anything else. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
    alarm(20); /* a parser that loops: SIGALRM */
    hwloc_topology_t t;
    if (xml_topology_load(xml, &t) != 0) _exit(1);
    hwloc_topology_destroy(t);
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return snprintf(why, n, "waitpid: %s", strerror(errno)), -1;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  if (WIFSIGNALED(st))
    snprintf(why, n, "libhwloc %s while loading it", WTERMSIG(st) == SIGALRM ? "did not finish within 20 s"
                                                                               : strsignal(WTERMSIG(st)));
  else
    snprintf(why, n, "hwloc refuses it");
  return -1;
}

ddp_result topo_load(const char *xml_path, hwloc_topology_t *out) {
  *out = NULL;
  if (xml_path) {
    char *xml = NULL, why[160];
    DDP_TRY(xml_read(xml_path, &xml));
    if (hwloc_get_api_version() < 0x30000) xml_downgrade(xml);
    ddp_result r = DDP_OK;
    if (xml_load_isolated(xml, why, sizeof why) != 0)
      r = ddp_usage_error("%s is not a valid hwloc XML topology (%s); HWLOC_XML_VERBOSE=1 says why", xml_path, why);
    else if (xml_topology_load(xml, out) != 0)
      r = ddp_usage_error("hwloc cannot load %s (%s); HWLOC_XML_VERBOSE=1 says why", xml_path, strerror(errno));
    free(xml);
    return r;
  }
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return DDP_FAIL(DDP_ERR_HWLOC, "hwloc_topology_init: %s", strerror(errno));
  ddp_result r = DDP_OK;
  /* A component this hwloc was built without cannot be left out, and need not be: the call then fails
   * with EINVAL, which is the answer we want. */
  static const char *skip[] = {"opencl", "gl", "cuda"};
  for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
    if (hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, skip[i]) != 0 &&
        errno != EINVAL) {
      r = DDP_FAIL(DDP_ERR_HWLOC, "hwloc_topology_set_components(-%s): %s", skip[i], strerror(errno));
      goto fail;
    }
  if (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    r = DDP_FAIL(DDP_ERR_HWLOC, "hwloc_topology_set_io_types_filter: %s", strerror(errno));
    goto fail;
  }
  if (hwloc_topology_load(topo) != 0) {
    r = DDP_FAIL(DDP_ERR_HWLOC, "hwloc_topology_load: %s", strerror(errno));
    goto fail;
  }
  *out = topo;
  return DDP_OK;
fail:
  hwloc_topology_destroy(topo);
  return r;
}

/* ---- classification ---- */


static int is_ancestor(hwloc_obj_t anc, hwloc_obj_t obj) {
  for (hwloc_obj_t o = obj; o; o = o->parent)
    if (o == anc) return 1;
  return 0;
}

static int bridges_between(hwloc_obj_t dev, hwloc_obj_t anc) {
  int n = 0;
  for (hwloc_obj_t o = dev->parent; o && o != anc; o = o->parent) n += o->type == HWLOC_OBJ_BRIDGE;
  return n;
}

/* The CPU-side object holding obj's I/O subtree (hwloc_get_non_io_ancestor_obj without the topology). */
static hwloc_obj_t cpu_side(hwloc_obj_t obj) {
  while (obj && !obj->cpuset) obj = obj->parent;
  return obj;
}

topo_class topo_pcie_class(hwloc_obj_t a, hwloc_obj_t b) {
  if (a == b) return TOPO_X;
  if (!a || !b) return TOPO_UNKNOWN;
  /* hwloc_get_common_ancestor_obj() compares depths, which are negative for I/O objects: walk parents. */
  hwloc_obj_t common = a->parent;
  while (common && !is_ancestor(common, b)) common = common->parent;
  if (!common) return TOPO_UNKNOWN;
  if (common->type == HWLOC_OBJ_BRIDGE) {
    if (common->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) return TOPO_PHB;
    return bridges_between(a, common) <= 1 && bridges_between(b, common) <= 1 ? TOPO_PIX : TOPO_PXB;
  }
  if (common->type == HWLOC_OBJ_PCI_DEVICE) return TOPO_PIX; /* functions below one device */
  /* Different host bridges: same NUMA nodes on the CPU side or not. */
  hwloc_obj_t ca = cpu_side(a), cb = cpu_side(b);
  if (!ca || !cb || !ca->nodeset || !cb->nodeset) return TOPO_UNKNOWN;
  return hwloc_bitmap_isequal(ca->nodeset, cb->nodeset) ? TOPO_NODE : TOPO_SYS;
}

/* ---- scanning ---- */

static void pci_busid(hwloc_obj_t o, char *buf, size_t n) {
  snprintf(buf, n, "%04x:%02x:%02x.%x", (unsigned)o->attr->pcidev.domain, (unsigned)o->attr->pcidev.bus,
           (unsigned)o->attr->pcidev.dev, (unsigned)o->attr->pcidev.func);
}

static int osdev_is_gpu_backend(hwloc_obj_t os) {
  return os->name && (!strncmp(os->name, "cuda", 4) || !strncmp(os->name, "nvml", 4));
}

static int pci_is_gpu(hwloc_obj_t o) {
  unsigned cls = o->attr->pcidev.class_id;
  if (o->attr->pcidev.vendor_id == 0x10de && (cls == 0x0302 || cls == 0x0300)) return 1;
  for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
    if (c->type == HWLOC_OBJ_OS_DEVICE && osdev_is_gpu_backend(c)) return 1;
  return 0;
}

static int pci_is_nic(hwloc_obj_t o) {
  unsigned cls = o->attr->pcidev.class_id;
  if ((cls >> 8) == 0x02 || cls == 0x0c06) return 1; /* network controllers, InfiniBand (old class) */
  for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
    if (c->type == HWLOC_OBJ_OS_DEVICE &&
        (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK || c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS))
      return 1;
  return 0;
}

static int busid_cmp(const void *pa, const void *pb) {
  hwloc_obj_t a = *(hwloc_obj_t const *)pa, b = *(hwloc_obj_t const *)pb;
  const struct hwloc_pcidev_attr_s *x = &a->attr->pcidev, *y = &b->attr->pcidev;
  if (x->domain != y->domain) return x->domain < y->domain ? -1 : 1;
  if (x->bus != y->bus) return x->bus < y->bus ? -1 : 1;
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  return (int)x->func - (int)y->func;
}

/* "HostBridge 0000:[2b-3b] > 2b:00.0 > 2c:00.0": each bridge between the host bridge and the device,
 * by bus id (domain shown when not 0). */
static void bridge_path(hwloc_obj_t dev, char *buf, size_t n) {
  hwloc_obj_t chain[64];
  int k = 0;
  for (hwloc_obj_t o = dev->parent; o && o->type == HWLOC_OBJ_BRIDGE && k < 64; o = o->parent) chain[k++] = o;
  buf[0] = 0;
  for (int i = k - 1; i >= 0; i--) {
    hwloc_obj_t o = chain[i];
    char item[48];
    if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      snprintf(item, sizeof item, "HostBridge %04x:[%02x-%02x]", (unsigned)o->attr->bridge.downstream.pci.domain,
               (unsigned)o->attr->bridge.downstream.pci.secondary_bus,
               (unsigned)o->attr->bridge.downstream.pci.subordinate_bus);
    } else {
      const struct hwloc_pcidev_attr_s *p = &o->attr->bridge.upstream.pci;
      if (p->domain)
        snprintf(item, sizeof item, "%04x:%02x:%02x.%x", (unsigned)p->domain, (unsigned)p->bus, (unsigned)p->dev,
                 (unsigned)p->func);
      else
        snprintf(item, sizeof item, "%02x:%02x.%x", (unsigned)p->bus, (unsigned)p->dev, (unsigned)p->func);
    }
    topo_appendf(buf, n, buf[0] ? " > %s" : "%s", item);
  }
  if (!buf[0]) snprintf(buf, n, "(no bridge)");
}

static void gpu_fill(hwloc_topology_t topo, hwloc_obj_t o, topo_gpu *g) {
  memset(g, 0, sizeof *g);
  g->nvml.cc_major = g->nvml.cc_minor = -1;
  pci_busid(o, g->busid, sizeof g->busid);
  g->vendor = o->attr->pcidev.vendor_id;
  g->device = o->attr->pcidev.device_id;
  g->class_id = o->attr->pcidev.class_id;
  g->link_gbs = o->attr->pcidev.linkspeed;
  const char *v;
  if ((v = hwloc_obj_get_info_by_name(o, "GPUModel"))) snprintf(g->model, sizeof g->model, "%s", v);
  if ((v = hwloc_obj_get_info_by_name(o, "NVIDIAUUID"))) snprintf(g->uuid, sizeof g->uuid, "%s", v);
  for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE || !osdev_is_gpu_backend(c)) continue;
    if (!g->model[0] && (v = hwloc_obj_get_info_by_name(c, "GPUModel"))) snprintf(g->model, sizeof g->model, "%s", v);
    if (!g->uuid[0] && (v = hwloc_obj_get_info_by_name(c, "NVIDIAUUID"))) snprintf(g->uuid, sizeof g->uuid, "%s", v);
  }
  bridge_path(o, g->path, sizeof g->path);
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
  hwloc_bitmap_list_snprintf(g->cpus, sizeof g->cpus, anc->cpuset);
  hwloc_bitmap_list_snprintf(g->numa, sizeof g->numa, anc->nodeset);
  g->local = !hwloc_bitmap_isequal(anc->cpuset, hwloc_topology_get_topology_cpuset(topo));
}

static void nic_fill(hwloc_obj_t o, topo_nic *nic) {
  memset(nic, 0, sizeof *nic);
  pci_busid(o, nic->busid, sizeof nic->busid);
  const char *ofed = NULL, *net = NULL;
  for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
    if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && !ofed)
      ofed = c->name;
    else if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && !net)
      net = c->name;
  }
  const char *name = ofed ? ofed : net ? net : nic->busid;
  snprintf(nic->name, sizeof nic->name, "%s", name);
  snprintf(nic->kind, sizeof nic->kind, "%s", ofed ? "OpenFabrics" : net ? "Network" : "PCI");
  for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
    if (c->type == HWLOC_OBJ_OS_DEVICE && c->name && c->name != name &&
        (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS || c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK))
      topo_appendf(nic->also, sizeof nic->also, nic->also[0] ? " %s" : "%s", c->name);
}

/* The per-link rate hwloc's NVML backend multiplies link counts by (MB/s): 20000 for NVLink 1, 25000 for
 * NVLink 2 to 4, 50000 for NVLink 5. The smallest rate that divides every value and leaves no GPU with more
 * than 18 links (NVLink 4/5's count) gives whole link counts on every known system. */
static double nvlink_rate(const struct hwloc_distances_s *d, const int *role) {
  static const double rates[] = {20000, 25000, 50000};
  unsigned n = d->nbobjs;
  for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
    int ok = 1;
    for (unsigned i = 0; i < n && ok; i++) {
      double row = 0;
      for (unsigned j = 0; j < n; j++) {
        if (i == j || !d->values[i * n + j]) continue;
        double links = (double)d->values[i * n + j] / rates[k];
        if (links != (double)(uint64_t)links) ok = 0;
        row += links;
      }
      if (role[i] >= 0 && row > 18) ok = 0;
    }
    if (ok) return rates[k];
  }
  return 0;
}

enum { ROLE_SWITCH = -1, ROLE_CPU = -2, ROLE_OTHER = -3 };

/* Link counts from hwloc's NVLinkBandwidth matrix (GPUs are its nvml OS devices or their PCI devices;
 * NVSwitches are other PCI devices; CPUs normal objects). GPUs sharing switches count the shared links.
 * Returns 1 when the matrix names at least one of our GPUs. */
static int nvlink_from_bandwidth(const struct hwloc_distances_s *d, hwloc_obj_t *objs, topo_node *node) {
  unsigned n = d->nbobjs;
  int *role = calloc(n, sizeof *role);
  if (!role) return 0;
  for (unsigned i = 0; i < n; i++) {
    hwloc_obj_t o = d->objs[i];
    if (o->type == HWLOC_OBJ_OS_DEVICE && o->parent) o = o->parent;
    role[i] = o->type == HWLOC_OBJ_PCI_DEVICE ? ROLE_SWITCH : hwloc_obj_type_is_normal(o->type) ? ROLE_CPU : ROLE_OTHER;
    for (int g = 0; g < node->ngpu; g++)
      if (objs[g] == o) role[i] = g;
  }
  double rate = nvlink_rate(d, role);
  int any = 0;
  for (unsigned i = 0; i < n && rate > 0; i++) {
    if (role[i] < 0) continue;
    topo_gpu *g = &node->gpu[role[i]];
    for (unsigned j = 0; j < n; j++) {
      if (i == j || !d->values[i * n + j]) continue;
      int links = (int)((double)d->values[i * n + j] / rate);
      if (role[j] >= 0) node->nvlinks_hwloc[role[i]][role[j]] += (short)links;
      if (role[j] == ROLE_SWITCH) g->hwloc_to_switch += links;
      if (role[j] == ROLE_CPU) g->hwloc_to_cpu += links;
      /* Through switch j: every other GPU k on j shares min(links) with i. */
      for (unsigned k = 0; role[j] == ROLE_SWITCH && k < n; k++) {
        if (k == i || role[k] < 0 || !d->values[k * n + j]) continue;
        int other = (int)((double)d->values[k * n + j] / rate);
        node->nvlinks_hwloc[role[i]][role[k]] += (short)(links < other ? links : other);
      }
    }
    any = 1;
  }
  free(role);
  return any;
}

/* Link counts as ddpbench saved them from NVML (topo_node_annotate): the NV# of every GPU pair. */
static int nvlink_from_saved(const struct hwloc_distances_s *d, hwloc_obj_t *objs, topo_node *node) {
  int any = 0;
  for (unsigned i = 0; i < d->nbobjs; i++)
    for (unsigned j = 0; j < d->nbobjs; j++)
      for (int a = 0; a < node->ngpu; a++)
        for (int b = 0; b < node->ngpu; b++)
          if (a != b && objs[a] == d->objs[i] && objs[b] == d->objs[j]) {
            node->nvlinks_hwloc[a][b] = (short)d->values[i * d->nbobjs + j];
            any = 1;
          }
  return any;
}

static void nvlink_from_hwloc(hwloc_topology_t topo, hwloc_obj_t *objs, topo_node *node) {
  static const char *names[] = {"NVLinkBandwidth", "ddpbenchNVLinks"};
  for (int k = 0; k < 2 && !node->hwloc_nvlink; k++) {
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_name(topo, names[k], &nr, &d, 0) != 0 || nr == 0 || !d) continue;
    if (k == 0 ? nvlink_from_bandwidth(d, objs, node) : nvlink_from_saved(d, objs, node))
      node->hwloc_nvlink = k == 0 ? TOPO_HWLOC_NVLINK_BANDWIDTH : TOPO_HWLOC_NVLINK_SAVED;
    hwloc_distances_release(topo, d);
  }
  if (!node->hwloc_nvlink)
    for (int a = 0; a < node->ngpu; a++)
      for (int b = 0; b < node->ngpu; b++) node->nvlinks_hwloc[a][b] = -1;
}

ddp_result topo_node_scan(hwloc_topology_t topo, const char *source, topo_node *node) {
  memset(node, 0, sizeof *node);
  snprintf(node->source, sizeof node->source, "%s", source ? source : "live");
  const char *v = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "hwlocVersion");
  if (v) snprintf(node->hwloc_version, sizeof node->hwloc_version, "%s", v);
  node->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);

  int npci = 0;
  for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o));) npci++;
  hwloc_obj_t *gpus = calloc((size_t)npci + 1, sizeof *gpus), *nics = calloc((size_t)npci + 1, sizeof *nics);
  if (!gpus || !nics) {
    free(gpus);
    free(nics);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int ng = 0, nn = 0;
  for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o));) {
    if (pci_is_gpu(o))
      gpus[ng++] = o;
    else if (pci_is_nic(o))
      nics[nn++] = o;
  }
  qsort(gpus, (size_t)ng, sizeof *gpus, busid_cmp);
  qsort(nics, (size_t)nn, sizeof *nics, busid_cmp);
  node->ngpu = ng < TOPO_MAX_GPUS ? ng : TOPO_MAX_GPUS;
  node->gpus_dropped = ng - node->ngpu;
  node->nnic = nn < TOPO_MAX_NICS ? nn : TOPO_MAX_NICS;
  node->nics_dropped = nn - node->nnic;

  node->flat = 1;
  for (int g = 0; g < node->ngpu; g++) {
    gpu_fill(topo, gpus[g], &node->gpu[g]);
    if (node->gpu[g].local && node->numa_nodes > 1) node->flat = 0;
  }
  for (int i = 0; i < node->nnic; i++) nic_fill(nics[i], &node->nic[i]);
  for (int a = 0; a < node->ngpu; a++) {
    for (int b = 0; b < node->ngpu; b++) {
      node->pcie[a][b] = (unsigned char)topo_pcie_class(gpus[a], gpus[b]);
      node->nvlinks_hwloc[a][b] = 0;
    }
    for (int i = 0; i < node->nnic; i++) node->nic_pcie[a][i] = (unsigned char)topo_pcie_class(gpus[a], nics[i]);
  }
  for (int i = 0; i < node->nnic; i++)
    for (int j = 0; j < node->nnic; j++) node->nic_nic[i][j] = (unsigned char)topo_pcie_class(nics[i], nics[j]);
  nvlink_from_hwloc(topo, gpus, node);
  free(gpus);
  free(nics);
  topo_node_link(node);
  return DDP_OK;
}


/* ---- NVML ---- */

void topo_node_query_nvml(topo_node *node, const nvml_api *api, const char *why, int only) {
  node->nvml_state = api ? TOPO_NVML_OK : TOPO_NVML_ABSENT;
  snprintf(node->nvml_why, sizeof node->nvml_why, "%s", api ? "" : why ? why : "NVML not loaded");
  nvml_driver_versions(api, node->driver, sizeof node->driver, node->cuda_driver, sizeof node->cuda_driver);
  for (int g = 0; g < node->ngpu; g++) {
    if (only >= 0 && g != only) continue;
    topo_gpu *gpu = &node->gpu[g];
    nvml_gpu_query(api, gpu->busid, &gpu->nvml);
    _Static_assert(sizeof gpu->model == sizeof gpu->nvml.name && sizeof gpu->uuid == sizeof gpu->nvml.uuid, "sizes");
    if (gpu->nvml.known && gpu->nvml.name[0]) memcpy(gpu->model, gpu->nvml.name, sizeof gpu->model);
    if (gpu->nvml.known && gpu->nvml.uuid[0]) memcpy(gpu->uuid, gpu->nvml.uuid, sizeof gpu->uuid);
  }
  topo_node_link(node);
}

/* Active links of g that end at a switch: those NVML says so, plus those to a PCI device that is not a GPU of
 * this host (a visible NVSwitch on a driver without the remote-type query). */
static int switch_links(const topo_node *node, const nvml_gpu *g) {
  int n = g->to_switch;
  for (int p = 0; p < g->npeers; p++)
    if (topo_gpu_find(node, g->peer[p].busid) < 0) n += g->peer[p].links;
  return n;
}

void topo_node_link(topo_node *node) {
  for (int a = 0; a < node->ngpu; a++) {
    const nvml_gpu *ga = &node->gpu[a].nvml;
    for (int b = 0; b < node->ngpu; b++) {
      const nvml_gpu *gb = &node->gpu[b].nvml;
      short n = -1;
      if (a == b) {
        n = 0;
      } else if (ga->known && ga->nvlink_known && gb->known && gb->nvlink_known) {
        int direct = 0;
        for (int p = 0; p < ga->npeers; p++)
          if (!strcmp(ga->peer[p].busid, node->gpu[b].busid)) direct += ga->peer[p].links;
        int sa = switch_links(node, ga), sb = switch_links(node, gb);
        n = (short)(direct + (sa < sb ? sa : sb));
      } else if (node->hwloc_nvlink) {
        n = node->nvlinks_hwloc[a][b];
      }
      node->nvlinks[a][b] = n;
    }
  }
}

/* ---- annotations for the saved XML ---- */

ddp_result topo_node_annotate(hwloc_topology_t topo, const topo_node *n) {
  hwloc_obj_t objs[TOPO_MAX_GPUS];
  int all_known = n->ngpu > 1, any = 0;
  for (int g = 0; g < n->ngpu; g++) {
    const topo_gpu *gpu = &n->gpu[g];
    objs[g] = hwloc_get_pcidev_by_busidstring(topo, gpu->busid);
    if (!objs[g]) return DDP_FAIL(DDP_ERR_HWLOC, "GPU %s vanished from the topology", gpu->busid);
    if (gpu->model[0] && !hwloc_obj_get_info_by_name(objs[g], "GPUModel") &&
        hwloc_obj_add_info(objs[g], "GPUModel", gpu->model) != 0)
      return DDP_FAIL(DDP_ERR_HWLOC, "hwloc_obj_add_info(GPUModel): %s", strerror(errno));
    if (gpu->uuid[0] && !hwloc_obj_get_info_by_name(objs[g], "NVIDIAUUID") &&
        hwloc_obj_add_info(objs[g], "NVIDIAUUID", gpu->uuid) != 0)
      return DDP_FAIL(DDP_ERR_HWLOC, "hwloc_obj_add_info(NVIDIAUUID): %s", strerror(errno));
    all_known &= gpu->nvml.known && gpu->nvml.nvlink_known;
    any |= gpu->nvml.links_active > 0;
  }
  if (n->hwloc_nvlink || !all_known || !any) return DDP_OK;
  hwloc_uint64_t *values = calloc((size_t)n->ngpu * (size_t)n->ngpu, sizeof *values);
  DDP_CHECK_ALLOC(values);
  for (int a = 0; a < n->ngpu; a++)
    for (int b = 0; b < n->ngpu; b++)
      if (a != b && n->nvlinks[a][b] > 0) values[a * n->ngpu + b] = (hwloc_uint64_t)n->nvlinks[a][b];
  /* hwloc wants a meaning: link counts rank like bandwidth, more is better. */
  hwloc_distances_add_handle_t h = hwloc_distances_add_create(
      topo, "ddpbenchNVLinks", HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH, 0);
  int ok = h && hwloc_distances_add_values(topo, h, (unsigned)n->ngpu, objs, values, 0) == 0 &&
           hwloc_distances_add_commit(topo, h, 0) == 0;
  free(values);
  if (!ok) return DDP_FAIL(DDP_ERR_HWLOC, "adding the ddpbenchNVLinks matrix: %s", strerror(errno));
  return DDP_OK;
}

int topo_visible_gpus(const topo_node *n, const char *cvd, int *idx, int max) {
  int count = 0;
  if (!cvd) {
    for (int g = 0; g < n->ngpu; g++)
      if (count < max) idx[count++] = g;
    return count;
  }
  char buf[512];
  snprintf(buf, sizeof buf, "%s", cvd);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok && count < max; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    int found = -1;
    char *end = NULL;
    long i = strtol(tok, &end, 10);
    if (end != tok && *end == 0) {
      if (i >= 0 && i < n->ngpu) found = (int)i;
    } else if (!strncmp(tok, "GPU-", 4)) {
      for (int g = 0; g < n->ngpu && found < 0; g++)
        if (n->gpu[g].uuid[0] && !strncmp(n->gpu[g].uuid, tok, strlen(tok))) found = g;
    }
    if (found < 0) break; /* CUDA ignores the rest of the list after an invalid entry */
    int dup = 0;
    for (int k = 0; k < count; k++) dup |= idx[k] == found;
    if (dup) break;
    idx[count++] = found;
  }
  return count;
}
