/* test_atomic_file: the rules of atomic_file.h on every kind of thing that can sit at an output path: a
 * regular file (refused without force, replaced with it), a symbolic link (refused either way, its target
 * intact), a FIFO, a directory and a character device (refused with what they are, left as they were), a
 * missing folder (refused by the pre-flight check); and no temporary file left behind in any case. And the
 * reader's rules (input_file.h): a regular file whole (NUL bytes and all, an empty one too); a FIFO without a
 * writer refused at once, not waited on; /dev/zero, a directory, a missing file and a file over the limit
 * refused with what they are, before any byte is read. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "atomic_file.h"
#include "check.h"
#include "input_file.h"
#include "testlib.h"

static char dir[] = "/tmp/ddpbench-test-atomic-XXXXXX";

static mode_t kind(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

int main(void) {
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  const char *p, *q;
  char buf[256], err[1024];

  /* a new file; then refused without force, replaced with it */
  p = tl_path(dir, "out.json");
  CHECK(atomic_file_check(p, 0, err, sizeof err) == DDP_OK, "absent file passes the check: %s", err);
  CHECK(tl_dir_count(dir, ".tmp.") == 0, "the check leaves no probe file");
  CHECK(atomic_file_write(p, "one", 3, 0) == DDP_OK, "new file written");
  tl_file_read(p, buf, sizeof buf);
  CHECK(strcmp(buf, "one") == 0, "content: %s", buf);
  CHECK(atomic_file_check(p, 0, err, sizeof err) == DDP_ERR_USAGE && strstr(err, "file exists"), "exists: %s", err);
  CHECK(atomic_file_write(p, "two", 3, 0) == DDP_ERR_USAGE, "no overwrite without force");
  tl_file_read(p, buf, sizeof buf);
  CHECK(strcmp(buf, "one") == 0, "first content intact");
  CHECK(atomic_file_write(p, "three", 5, 1) == DDP_OK, "force replaces a regular file");
  tl_file_read(p, buf, sizeof buf);
  CHECK(strcmp(buf, "three") == 0 && kind(p) == S_IFREG, "replaced: %s", buf);

  /* a symbolic link: refused with and without force; the link and its target stay */
  q = tl_path(dir, "link.json");
  CHECK(symlink(p, q) == 0, "symlink");
  CHECK(atomic_file_check(q, 1, err, sizeof err) == DDP_ERR_USAGE && strstr(err, "symbolic link"), "link: %s", err);
  CHECK(atomic_file_write(q, "evil", 4, 1) == DDP_ERR_USAGE, "write through a link refused");
  tl_file_read(p, buf, sizeof buf);
  CHECK(kind(q) == S_IFLNK && strcmp(buf, "three") == 0, "link and target intact");

  /* a FIFO and a directory: refused with force, named, left in place */
  q = tl_path(dir, "fifo");
  CHECK(mkfifo(q, 0644) == 0, "mkfifo");
  CHECK(atomic_file_check(q, 1, err, sizeof err) == DDP_ERR_USAGE && strstr(err, "a FIFO"), "fifo: %s", err);
  CHECK(atomic_file_write(q, "x", 1, 1) == DDP_ERR_USAGE && kind(q) == S_IFIFO, "FIFO left as it was");
  q = tl_path(dir, "sub");
  CHECK(mkdir(q, 0755) == 0, "mkdir");
  CHECK(atomic_file_write(q, "x", 1, 1) == DDP_ERR_USAGE && kind(q) == S_IFDIR, "directory left as it was");

  /* a character device: /dev/null by the check alone; a private copy of it (as root) through the writer */
  CHECK(atomic_file_check("/dev/null", 1, err, sizeof err) == DDP_ERR_USAGE && strstr(err, "character device"),
        "/dev/null: %s", err);
  q = tl_path(dir, "null");
  if (mknod(q, S_IFCHR | 0666, makedev(1, 3)) == 0) {
    CHECK(atomic_file_write(q, "x", 1, 1) == DDP_ERR_USAGE && kind(q) == S_IFCHR, "device node left as it was");
  } else {
    printf("note: not root, the device-node write case is covered by the /dev/null check only\n");
  }

  /* a missing folder: the pre-flight says so */
  q = tl_path(dir, "no/such/dir/x.json");
  CHECK(atomic_file_check(q, 0, err, sizeof err) == DDP_ERR_USAGE && strstr(err, "folder does not exist"), "%s", err);
  CHECK(atomic_file_write(q, "x", 1, 0) == DDP_ERR_SYSTEM, "write into a folder gone since the check: runtime error");

  /* abandon removes the temporary file of an interrupted write (what the signal handler calls) */
  atomic_file_abandon();
  CHECK(tl_dir_count(dir, ".tmp.") == 0, "no temporary file left: %d", tl_dir_count(dir, ".tmp."));

  /* Error lines where there is no rank (before MPI, `ddpbench topo`) name the host, never "rank -1 host ?". */
  q = tl_path(dir, "stderr.txt");
  int saved = tl_stderr_redirect(q);
  DDP_FAIL(DDP_ERR_HWLOC, "a test error");
  tl_stderr_restore(saved, q, buf, sizeof buf);
  char host[256] = "";
  gethostname(host, sizeof host);
  CHECK(strstr(buf, "[ddpbench host ") && strstr(buf, host) && !strstr(buf, "rank -1") && !strstr(buf, "host ?"),
        "error line without a rank: %s", buf);

  /* ---- the reader ---- */
  char why[300];
  size_t len = 99;
  q = tl_path(dir, "in.bin");
  tl_file_write_n(q, "ab\0cd", 5);
  char *text = input_file_read(q, 1 << 20, &len, why, sizeof why);
  CHECK(text && len == 5 && !memcmp(text, "ab\0cd", 6), "a regular file with a NUL byte read whole: len %zu", len);
  free(text);
  text = input_file_read(q, 4, &len, why, sizeof why);
  CHECK(!text && strstr(why, "more than the"), "a file over the limit: %s", text ? "read" : why);
  free(text);
  q = tl_path(dir, "empty");
  tl_file_write(q, "");
  text = input_file_read(q, 10, &len, why, sizeof why);
  CHECK(text && len == 0 && !text[0], "an empty file reads as empty");
  free(text);
  q = tl_path(dir, "fifo-in");
  CHECK(mkfifo(q, 0600) == 0, "mkfifo");
  alarm(10); /* a blocking open would hang here: SIGALRM ends the test as failed */
  text = input_file_read(q, 1 << 20, &len, why, sizeof why);
  alarm(0);
  CHECK(!text && strstr(why, "is a FIFO, not a regular file"), "a FIFO without a writer: %s", text ? "read" : why);
  text = input_file_read("/dev/zero", 1 << 20, &len, why, sizeof why);
  CHECK(!text && strstr(why, "is a character device, not a regular file"), "/dev/zero: %s", text ? "read" : why);
  text = input_file_read(dir, 1 << 20, &len, why, sizeof why);
  CHECK(!text && strstr(why, "is a directory"), "a directory: %s", text ? "read" : why);
  q = tl_path(dir, "missing");
  text = input_file_read(q, 1 << 20, &len, why, sizeof why);
  CHECK(!text && strstr(why, "cannot read: No such file"), "a missing file: %s", text ? "read" : why);

  tl_rmtree(dir);
  return check_summary();
}
