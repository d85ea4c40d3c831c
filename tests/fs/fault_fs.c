/*
 * fault_fs: a passthrough FUSE file system (libfuse3) over a backing
 * directory that injects what network file systems do, for the test of the
 * AOT cache on it (tests/fs/fault_fs_test.sh, docs/cache.md "Tested on real
 * file systems").
 *
 *   fault_fs BACKING MOUNTPOINT [-f] [-o OPTION[,OPTION...]]
 *
 * Faults, each off (0) unless set; N is "one in N operations" of the kind
 * the fault applies to:
 *
 *   estale=N    open, getattr and read fail with ESTALE (the kernel retries
 *               an open or a path lookup once on ESTALE, as for NFS; an
 *               fstat or a read reaches the program)
 *   eio=N       read, write and fsync fail with EIO, having done nothing
 *   rename=N    a rename of a regular file (plain, or RENAME_NOREPLACE) is
 *               not atomic: the destination is made anew with the first
 *               third of the source, the rename answers, and the rest is
 *               copied in two more pieces, each after a pause
 *               (rename_pause_ms, 20 by default); only then is the source
 *               removed. Readers in that window see a short file.
 *   short=N     read and write move fewer bytes than asked (at least one):
 *               a read the front of what is there, a write the front of
 *               what it was given
 *   coarse=S    getattr reports access, modification and change times
 *               rounded down to whole multiples of S seconds (1; 2 as FAT
 *               and SMB)
 *
 * While estale, eio or short is on, files are opened with direct I/O, so
 * that the program itself meets each fault of a read: through the page
 * cache the kernel would read again after a failed read ahead, and take a
 * short read for the end of the file. Each fault injected is a line on
 * stderr (the kind, the operation, the path; not coarse times).
 *
 *   seed=N      the seed of the choices (default 1): whether the k-th
 *               operation of a kind faults is a hash of the seed, the kind
 *               and k, so the same operations in the same order fault alike
 *   counts=PATH the faults injected since the mount, per kind, written to
 *               PATH (outside the mount) at every change of the faults and
 *               at unmount: "generation G", then "KIND COUNT" lines for
 *               estale, eio, rename, short_read, short_write and coarse
 *               (getattrs whose times were rounded), and
 *               "renames_in_flight N"
 *   control=PATH  a file of settings ("estale=50 rename=2 ...", separated
 *               by spaces, commas or new lines), read at SIGUSR1: every
 *               fault it does not name goes off (the seed stays); then the
 *               counts file is written with the next generation, so a test
 *               that signals waits for that generation to know the change
 *               is in force.
 *
 * Everything else is passed through to the backing directory. Locks
 * (flock, fcntl) are left to the kernel, which keeps them locally, as it
 * does for any FUSE file system without lock operations. The kernel sees
 * the type FUSE (statfs), which the cache counts as a shared file system.
 * Unmounting (umount, fusermount3 -u) ends it, after the last non-atomic
 * rename has finished.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

enum kind { ESTALE_FAULT, EIO_FAULT, RENAME_FAULT, SHORT_READ, SHORT_WRITE, COARSE_TIMES, KINDS };
static const char *const kind_names[KINDS] = {"estale", "eio", "rename", "short_read", "short_write", "coarse"};

/* The settings: atomics, since SIGUSR1's thread changes them under running operations. */
static atomic_uint estale_rate, eio_rate, rename_rate, short_rate, coarse_seconds;
static atomic_uint rename_pause_ms = 20;
static atomic_ullong seed = 1;
static char *counts_path, *control_path, *backing_path;
static int backing = -1; /* the backing directory, opened before the mount covers it */

static atomic_ullong operations[KINDS]; /* operations that could have faulted, per kind */
static atomic_ullong injected[KINDS];   /* faults injected, per kind */
static atomic_uint generation;
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;

/* Renames still copying, so that unmount waits for them. */
static pthread_mutex_t in_flight_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t in_flight_done = PTHREAD_COND_INITIALIZER;
static unsigned in_flight;

/* splitmix64's finalizer: a well-mixed 64 bits from any input. */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Whether this operation (`op` on `path`) of `kind` faults, at one in
 * `rate`; each fault is a line on stderr. `draw`, when given, gets more bits
 * of the same choice (for the length of a short read). */
static int fault(enum kind kind, unsigned rate, uint64_t *draw, const char *op, const char *path) {
  if (rate == 0) return 0;
  uint64_t n = atomic_fetch_add(&operations[kind], 1);
  uint64_t h = mix(atomic_load(&seed) ^ mix(((uint64_t)kind << 56) ^ n));
  if (draw != NULL) *draw = mix(h);
  if (h % rate != 0) return 0;
  atomic_fetch_add(&injected[kind], 1);
  if (op != NULL)
    fprintf(stderr, "fault_fs: %s: %s %s\n", kind_names[kind], op, path != NULL ? path : "(an open file)");
  return 1;
}

/* A path of the mount ("/", "/a/b") as one relative to the backing directory. */
static const char *rel(const char *path) { return path[1] == '\0' ? "." : path + 1; }

/* ------------------------------------------------------------- settings */

/* Applies one "key=value"; 1 when it is one of ours, 0 otherwise. */
static int apply_setting(const char *setting) {
  static const struct {
    const char *key;
    atomic_uint *value;
  } rates[] = {{"estale", &estale_rate}, {"eio", &eio_rate},        {"rename", &rename_rate},
               {"short", &short_rate},   {"coarse", &coarse_seconds}, {"rename_pause_ms", &rename_pause_ms}};
  const char *eq = strchr(setting, '=');
  if (eq == NULL) return 0;
  size_t key_len = (size_t)(eq - setting);
  char *end = NULL;
  unsigned long long value = strtoull(eq + 1, &end, 10);
  int number = end != eq + 1 && *end == '\0';
  for (size_t i = 0; i < sizeof rates / sizeof rates[0]; ++i)
    if (strlen(rates[i].key) == key_len && strncmp(setting, rates[i].key, key_len) == 0) {
      if (!number) return 0;
      atomic_store(rates[i].value, (unsigned)value);
      return 1;
    }
  if (key_len == 4 && strncmp(setting, "seed", 4) == 0 && number) {
    atomic_store(&seed, value);
    return 1;
  }
  return 0;
}

/* Writes the counts file: to a temporary name beside it, then renamed. */
static void write_counts(void) {
  if (counts_path == NULL) return;
  pthread_mutex_lock(&counts_lock);
  char temp[4096];
  snprintf(temp, sizeof temp, "%s.tmp", counts_path);
  FILE *out = fopen(temp, "w");
  if (out != NULL) {
    fprintf(out, "generation %u\n", atomic_load(&generation));
    for (int k = 0; k < KINDS; ++k) fprintf(out, "%s %llu\n", kind_names[k], atomic_load(&injected[k]));
    pthread_mutex_lock(&in_flight_lock);
    fprintf(out, "renames_in_flight %u\n", in_flight);
    pthread_mutex_unlock(&in_flight_lock);
    if (fclose(out) == 0) rename(temp, counts_path);
  }
  pthread_mutex_unlock(&counts_lock);
}

/* SIGUSR1: the control file read anew (faults it does not name go off), then the counts written. */
static void reload_control(void) {
  if (control_path != NULL) {
    atomic_store(&estale_rate, 0);
    atomic_store(&eio_rate, 0);
    atomic_store(&rename_rate, 0);
    atomic_store(&short_rate, 0);
    atomic_store(&coarse_seconds, 0);
    atomic_store(&rename_pause_ms, 20);
    FILE *in = fopen(control_path, "r");
    if (in != NULL) {
      char text[4096], *save = NULL;
      size_t n = fread(text, 1, sizeof text - 1, in);
      text[n] = '\0';
      fclose(in);
      for (char *word = strtok_r(text, " ,\t\n", &save); word != NULL; word = strtok_r(NULL, " ,\t\n", &save))
        if (!apply_setting(word)) fprintf(stderr, "fault_fs: %s: '%s' is not a setting\n", control_path, word);
    } else {
      fprintf(stderr, "fault_fs: cannot read %s: %s; every fault off\n", control_path, strerror(errno));
    }
  }
  fprintf(stderr, "fault_fs: estale=%u eio=%u rename=%u (pause %u ms) short=%u coarse=%u s\n",
          atomic_load(&estale_rate), atomic_load(&eio_rate), atomic_load(&rename_rate),
          atomic_load(&rename_pause_ms), atomic_load(&short_rate), atomic_load(&coarse_seconds));
  atomic_fetch_add(&generation, 1);
  write_counts();
}

static void *control_thread(void *unused) {
  (void)unused;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) == 0) reload_control();
  }
  return NULL;
}

/* ------------------------------------------------------------ operations */

static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  (void)conn;
  cfg->hard_remove = 1; /* unlink what is open at once: no .fuse_hidden files in the cache directory */
  cfg->use_ino = 0;     /* stable numbers of the library's own, even across a non-atomic rename */
  /* Started here, in the process that serves (after a fork to the background). */
  pthread_t t;
  if (pthread_create(&t, NULL, control_thread, NULL) == 0) pthread_detach(t);
  write_counts();
  return NULL;
}

static void ff_destroy(void *unused) {
  (void)unused;
  pthread_mutex_lock(&in_flight_lock);
  while (in_flight > 0) pthread_cond_wait(&in_flight_done, &in_flight_lock);
  pthread_mutex_unlock(&in_flight_lock);
  write_counts();
}

/* Times rounded down to whole multiples of `coarse` seconds, as a server
 * that keeps no finer times reports them. */
static void coarsen(struct stat *st) {
  unsigned g = atomic_load(&coarse_seconds);
  if (g == 0) return;
  struct timespec *times[] = {&st->st_atim, &st->st_mtim, &st->st_ctim};
  int changed = 0;
  for (int i = 0; i < 3; ++i) {
    time_t s = times[i]->tv_sec - (time_t)(((times[i]->tv_sec % g) + g) % g);
    changed |= s != times[i]->tv_sec || times[i]->tv_nsec != 0;
    times[i]->tv_sec = s;
    times[i]->tv_nsec = 0;
  }
  if (changed) atomic_fetch_add(&injected[COARSE_TIMES], 1);
}

static int ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  if (fault(ESTALE_FAULT, atomic_load(&estale_rate), NULL, "getattr", path)) return -ESTALE;
  int r = fi != NULL ? fstat((int)fi->fh, st) : fstatat(backing, rel(path), st, AT_SYMLINK_NOFOLLOW);
  if (r != 0) return -errno;
  coarsen(st);
  return 0;
}

static int ff_access(const char *path, int mask) {
  return faccessat(backing, rel(path), mask, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

static int ff_readlink(const char *path, char *buf, size_t size) {
  ssize_t n = readlinkat(backing, rel(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
  (void)offset, (void)fi, (void)flags;
  int fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    int e = errno;
    close(fd);
    return -e;
  }
  /* All at once (offset 0): the library keeps the listing for the kernel's later calls. */
  for (struct dirent *d; (d = readdir(dir)) != NULL;) {
    struct stat st = {.st_ino = d->d_ino, .st_mode = (mode_t)DTTOIF(d->d_type)};
    if (fill(buf, d->d_name, &st, 0, 0) != 0) break;
  }
  closedir(dir);
  return 0;
}

static int ff_mknod(const char *path, mode_t mode, dev_t rdev) {
  int r = S_ISFIFO(mode) ? mkfifoat(backing, rel(path), mode) : mknodat(backing, rel(path), mode, rdev);
  return r == 0 ? 0 : -errno;
}

static int ff_mkdir(const char *path, mode_t mode) { return mkdirat(backing, rel(path), mode) == 0 ? 0 : -errno; }
static int ff_unlink(const char *path) { return unlinkat(backing, rel(path), 0) == 0 ? 0 : -errno; }
static int ff_rmdir(const char *path) { return unlinkat(backing, rel(path), AT_REMOVEDIR) == 0 ? 0 : -errno; }

static int ff_symlink(const char *target, const char *path) {
  return symlinkat(target, backing, rel(path)) == 0 ? 0 : -errno;
}

static int ff_link(const char *from, const char *to) {
  return linkat(backing, rel(from), backing, rel(to), 0) == 0 ? 0 : -errno;
}

/* Copies [from, to) of `in` to `out`; 0 or an errno. */
static int copy_range(int in, int out, off_t from, off_t to) {
  char buf[65536];
  while (from < to) {
    size_t want = (size_t)(to - from) < sizeof buf ? (size_t)(to - from) : sizeof buf;
    ssize_t n = pread(in, buf, want, from);
    if (n <= 0) return n < 0 ? errno : 0; /* the source shrank: copy what there is */
    for (ssize_t done = 0; done < n;) {
      ssize_t w = pwrite(out, buf + done, (size_t)(n - done), from + done);
      if (w < 0) return errno;
      done += w;
    }
    from += n;
  }
  return 0;
}

struct slow_rename {
  int source, destination;
  off_t copied, size;
  char *source_name; /* relative to the backing directory */
};

static void pause_ms(unsigned ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* The rest of a non-atomic rename: two more pieces, each after a pause;
 * then the source goes, if its name still holds the file copied. */
static void *finish_rename(void *arg) {
  struct slow_rename *r = arg;
  off_t third = (r->size - r->copied) / 2;
  pause_ms(atomic_load(&rename_pause_ms));
  copy_range(r->source, r->destination, r->copied, r->copied + third);
  pause_ms(atomic_load(&rename_pause_ms));
  copy_range(r->source, r->destination, r->copied + third, r->size);
  struct stat was, now;
  if (fstat(r->source, &was) == 0 && fstatat(backing, r->source_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
      was.st_dev == now.st_dev && was.st_ino == now.st_ino)
    unlinkat(backing, r->source_name, 0);
  close(r->source);
  close(r->destination);
  free(r->source_name);
  free(r);
  pthread_mutex_lock(&in_flight_lock);
  if (--in_flight == 0) pthread_cond_broadcast(&in_flight_done);
  pthread_mutex_unlock(&in_flight_lock);
  return NULL;
}

/* A rename by copying, answered when the destination holds a third of the
 * source: 0, or an errno to fall back to a real rename (nothing changed). */
static int start_slow_rename(const char *from, const char *to) {
  struct stat st;
  if (fstatat(backing, rel(from), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2)
    return EINVAL;
  struct stat dest;
  if (fstatat(backing, rel(to), &dest, AT_SYMLINK_NOFOLLOW) == 0 &&
      (S_ISDIR(dest.st_mode) || (dest.st_dev == st.st_dev && dest.st_ino == st.st_ino)))
    return EINVAL; /* a directory there, or the same file: the real rename's answer */
  int in = openat(backing, rel(from), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return errno;
  /* The destination anew (never the old file rewritten in place), so that two
   * renames to one name each fill a file of their own. */
  int out = -1;
  for (int tries = 0; out < 0 && tries < 8; ++tries) {
    if (unlinkat(backing, rel(to), 0) != 0 && errno != ENOENT) break;
    out = openat(backing, rel(to), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
    if (out < 0 && errno != EEXIST) break;
  }
  if (out < 0) {
    int e = errno;
    close(in);
    return e;
  }
  if (fchown(out, st.st_uid, st.st_gid) != 0) { /* best effort: the owner as root, else the daemon's */
  }
  struct slow_rename *r = calloc(1, sizeof *r);
  r->source = in;
  r->destination = out;
  r->size = st.st_size;
  r->copied = st.st_size / 3;
  r->source_name = strdup(rel(from));
  copy_range(in, out, 0, r->copied);
  pthread_mutex_lock(&in_flight_lock);
  ++in_flight;
  pthread_mutex_unlock(&in_flight_lock);
  pthread_t t;
  if (pthread_create(&t, NULL, finish_rename, r) == 0)
    pthread_detach(t);
  else
    finish_rename(r);
  return 0;
}

static int ff_rename(const char *from, const char *to, unsigned int flags) {
  if ((flags & ~RENAME_NOREPLACE) == 0 && fault(RENAME_FAULT, atomic_load(&rename_rate), NULL, NULL, NULL)) {
    struct stat there;
    if ((flags & RENAME_NOREPLACE) != 0 && fstatat(backing, rel(to), &there, AT_SYMLINK_NOFOLLOW) == 0) {
      atomic_fetch_sub(&injected[RENAME_FAULT], 1);
      return -EEXIST;
    }
    if (start_slow_rename(from, to) == 0) {
      fprintf(stderr, "fault_fs: rename: %s to %s, not atomic\n", from, to);
      return 0;
    }
    atomic_fetch_sub(&injected[RENAME_FAULT], 1); /* not a regular file: renamed as ever, not counted */
  }
  if (flags != 0) return renameat2(backing, rel(from), backing, rel(to), flags) == 0 ? 0 : -errno;
  return renameat(backing, rel(from), backing, rel(to)) == 0 ? 0 : -errno;
}

static int ff_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
  int r = fi != NULL ? fchmod((int)fi->fh, mode) : fchmodat(backing, rel(path), mode, 0);
  return r == 0 ? 0 : -errno;
}

static int ff_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
  int r = fi != NULL ? fchown((int)fi->fh, uid, gid) : fchownat(backing, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : -errno;
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
  if (fi != NULL) return ftruncate((int)fi->fh, size) == 0 ? 0 : -errno;
  int fd = openat(backing, rel(path), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -errno;
  int r = ftruncate(fd, size) == 0 ? 0 : -errno;
  close(fd);
  return r;
}

static int ff_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
  int r = fi != NULL ? futimens((int)fi->fh, tv) : utimensat(backing, rel(path), tv, AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : -errno;
}

/* Direct I/O while a fault of reads is on, so that the program meets each
 * one: through the page cache the kernel would read again after a failed
 * read ahead, and take a short read for the end of the file. */
static void set_io_mode(struct fuse_file_info *fi) {
  fi->direct_io = atomic_load(&estale_rate) != 0 || atomic_load(&eio_rate) != 0 || atomic_load(&short_rate) != 0;
}

static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
  int fd = openat(backing, rel(path), fi->flags | O_CREAT | O_CLOEXEC, mode);
  if (fd < 0) return -errno;
  fi->fh = (uint64_t)fd;
  set_io_mode(fi);
  return 0;
}

static int ff_open(const char *path, struct fuse_file_info *fi) {
  if (fault(ESTALE_FAULT, atomic_load(&estale_rate), NULL, "open", path)) return -ESTALE;
  int fd = openat(backing, rel(path), fi->flags | O_CLOEXEC);
  if (fd < 0) return -errno;
  fi->fh = (uint64_t)fd;
  set_io_mode(fi);
  return 0;
}

static int ff_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
  if (fault(ESTALE_FAULT, atomic_load(&estale_rate), NULL, "read", path)) return -ESTALE;
  if (fault(EIO_FAULT, atomic_load(&eio_rate), NULL, "read", path)) return -EIO;
  ssize_t n = pread((int)fi->fh, buf, size, offset);
  if (n < 0) return -errno;
  uint64_t draw = 0;
  if (n > 1 && fault(SHORT_READ, atomic_load(&short_rate), &draw, "read", path))
    n = 1 + (ssize_t)(draw % (uint64_t)(n - 1)); /* the front of what is there */
  return (int)n;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
  if (fault(EIO_FAULT, atomic_load(&eio_rate), NULL, "write", path)) return -EIO;
  uint64_t draw = 0;
  if (size > 1 && fault(SHORT_WRITE, atomic_load(&short_rate), &draw, "write", path))
    size = 1 + (size_t)(draw % (size - 1)); /* the front of what it was given */
  ssize_t n = pwrite((int)fi->fh, buf, size, offset);
  return n < 0 ? -errno : (int)n;
}

static int ff_statfs(const char *path, struct statvfs *st) {
  (void)path;
  return fstatvfs(backing, st) == 0 ? 0 : -errno;
}

static int ff_release(const char *path, struct fuse_file_info *fi) {
  (void)path;
  close((int)fi->fh);
  return 0;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
  if (fault(EIO_FAULT, atomic_load(&eio_rate), NULL, "fsync", path)) return -EIO;
  int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
  return r == 0 ? 0 : -errno;
}

static int ff_fallocate(const char *path, int mode, off_t offset, off_t length, struct fuse_file_info *fi) {
  (void)path;
  return fallocate((int)fi->fh, mode, offset, length) == 0 ? 0 : -errno;
}

static const struct fuse_operations operations_table = {
    .init = ff_init,         .destroy = ff_destroy,   .getattr = ff_getattr, .access = ff_access,
    .readlink = ff_readlink, .readdir = ff_readdir,   .mknod = ff_mknod,     .mkdir = ff_mkdir,
    .unlink = ff_unlink,     .rmdir = ff_rmdir,       .symlink = ff_symlink, .link = ff_link,
    .rename = ff_rename,     .chmod = ff_chmod,       .chown = ff_chown,     .truncate = ff_truncate,
    .utimens = ff_utimens,   .create = ff_create,     .open = ff_open,       .read = ff_read,
    .write = ff_write,       .statfs = ff_statfs,     .release = ff_release, .fsync = ff_fsync,
    .fallocate = ff_fallocate,
};

/* ------------------------------------------------------------------ main */

static int parse_option(void *data, const char *arg, int key, struct fuse_args *args) {
  (void)data, (void)args;
  if (key == FUSE_OPT_KEY_NONOPT && backing_path == NULL) {
    backing_path = strdup(arg);
    return 0; /* ours: the backing directory, not for libfuse */
  }
  if (key != FUSE_OPT_KEY_OPT) return 1;
  if (strncmp(arg, "counts=", 7) == 0) return counts_path = strdup(arg + 7), 0;
  if (strncmp(arg, "control=", 8) == 0) return control_path = strdup(arg + 8), 0;
  return apply_setting(arg) ? 0 : 1; /* ours, or libfuse's */
}

int main(int argc, char *argv[]) {
  struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
  if (fuse_opt_parse(&args, NULL, NULL, parse_option) != 0) return 2;
  if (backing_path == NULL) {
    fprintf(stderr, "usage: %s BACKING MOUNTPOINT [-f] [-o estale=N,eio=N,rename=N,short=N,coarse=S,seed=N,"
                    "rename_pause_ms=MS,counts=PATH,control=PATH]\n", argv[0]);
    return 2;
  }
  backing = open(backing_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (backing < 0) {
    fprintf(stderr, "fault_fs: cannot open %s: %s\n", backing_path, strerror(errno));
    return 2;
  }
  /* SIGUSR1 is taken by the control thread alone (sigwait): blocked in every thread. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  int status = fuse_main(args.argc, args.argv, &operations_table, NULL);
  fuse_opt_free_args(&args);
  return status;
}
