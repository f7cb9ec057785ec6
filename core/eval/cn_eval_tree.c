/* SPDX-License-Identifier: Apache-2.0 */
/* A commit's indexed files, taken from a bare mirror.
 *
 * `codenib eval` indexes each dataset instance at its base commit.  A
 * checkout per instance would need a work tree per commit and writes every
 * file of the repository; the index only wants the source files of its
 * languages, tests and docs left out (cn_eval_rule.c).
 * So: one `git ls-tree -r -z` lists the commit, the indexing rule picks the
 * entries, and one `git cat-file --batch` process streams all their blobs
 * (a process per file would cost seconds on sympy's ~1,500 files).  Mirrors
 * may lack some large blobs (partial clones): those are counted, not fatal.
 *
 * The files go to a sibling temporary directory published with rename(),
 * so a directory named after a commit is always complete and can be reused
 * by later runs as a cache. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cn_eval_run.h"
#include "../util/cn_git.h"

/* ------------------------------------------------------------ helpers -- */

static bool component_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* A tree path we are willing to create under the destination: relative,
 * no empty, "." or ".." component, and no ".git" (which would make the
 * copy look like a repository to whatever indexes it).  Git's own fsck
 * refuses these, but a mirror is data from the network. */
static bool path_is_safe(const char *path, size_t len)
{
    const char *p = path, *end = path + len, *slash;

    if (len == 0 || memchr(path, '\0', len) != NULL || path[0] == '/') return false;
    for (; p <= end; p = slash + 1) {
        slash = memchr(p, '/', (size_t)(end - p));
        if (slash == NULL) slash = end;
        size_t n = (size_t)(slash - p);
        if (n == 0 || component_is(p, n, ".") || component_is(p, n, "..") ||
            (n == 4 && strncasecmp(p, ".git", 4) == 0))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------ removal -- */

/* nftw gives its callback no user pointer; the first failure of this
 * thread's walk is kept here. */
static _Thread_local int remove_errno;
static _Thread_local char remove_failed[512];

static int remove_one(const char *fpath, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int r = (flag == FTW_DP) ? rmdir(fpath) : unlink(fpath);
    if (r != 0 && errno != ENOENT) {
        remove_errno = errno;
        snprintf(remove_failed, sizeof remove_failed, "%s", fpath);
        return 1;   /* stop the walk */
    }
    return 0;
}

/* 0, or -errno with the failing entry in remove_failed; sets no error so a
 * caller cleaning up after a failure keeps its own message. */
static int remove_tree_quiet(const char *dest)
{
    struct stat sb;

    remove_errno = 0;
    remove_failed[0] = '\0';
    if (lstat(dest, &sb) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(remove_failed, sizeof remove_failed, "%s", dest);
        return -errno;
    }
    /* FTW_PHYS: a symlink is reported as itself and unlinked, never followed */
    if (nftw(dest, remove_one, 32, FTW_DEPTH | FTW_PHYS) != 0) {
        if (remove_errno == 0) {
            remove_errno = errno ? errno : EIO;
            snprintf(remove_failed, sizeof remove_failed, "%s", dest);
        }
        return -remove_errno;
    }
    return 0;
}

int cn_eval_tree_remove(const char *dest)
{
    int r;
    if (dest == NULL || *dest == '\0') return cn_error_set(CN_EINVAL, "eval tree remove: no directory given");
    if ((r = remove_tree_quiet(dest)) < 0)
        return cn_error_set(CN_EIO, "eval tree remove: cannot remove %s: %s", remove_failed, strerror(-r));
    return 0;
}

/* ------------------------------------------------------- reuse counting -- */

static _Thread_local cn_eval_tree_stats *count_stats;
static _Thread_local const cn_eval_langs *count_langs;
static _Thread_local size_t count_root_len;

static int count_one(const char *fpath, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag == FTW_F && S_ISREG(sb->st_mode) && strlen(fpath) > count_root_len &&
        cn_eval_is_indexed(count_langs, fpath + count_root_len + 1)) {
        count_stats->files++;
        count_stats->bytes += (unsigned long long)sb->st_size;
    }
    return 0;
}

/* A reused cache says what it holds: the indexed files found in it. */
static void count_reused(const char *dest, const cn_eval_langs *langs, cn_eval_tree_stats *st)
{
    memset(st, 0, sizeof *st);
    st->reused = true;
    count_stats = st;
    count_langs = langs;
    count_root_len = strlen(dest);
    while (count_root_len > 1 && dest[count_root_len - 1] == '/') count_root_len--;
    (void)nftw(dest, count_one, 32, FTW_PHYS);
    count_stats = NULL;
    count_langs = NULL;
}

/* ------------------------------------------------------------- helpers -- */

/* Creates every missing directory before the last '/' of path. */
static int make_parents(const char *path, char *scratch)
{
    size_t len = strlen(path);
    memcpy(scratch, path, len + 1);
    for (size_t i = 1; i < len; i++) {
        if (scratch[i] != '/') continue;
        scratch[i] = '\0';
        if (mkdir(scratch, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            scratch[i] = '/';
            return -e;
        }
        scratch[i] = '/';
    }
    return 0;
}

typedef struct tree_ctx {
    const char *git_dir, *commit;
    char sha[72];                 /* the commit, resolved */
    char *tmp;                    /* DEST.tmp-<pid>-<n> */
    const cn_eval_langs *langs;
    cn_eval_tree_stats *st;
} tree_ctx;

/* Every error names the mirror and the commit. */
static int tree_fail(const tree_ctx *c, int code, const char *fmt, ...) CN_PRINTF(3, 4);
static int tree_fail(const tree_ctx *c, int code, const char *fmt, ...)
{
    cn_buf b = CN_BUF_INIT;
    va_list ap;
    int rc;

    cn_buf_printf(&b, "eval tree: commit %s of mirror %s: ", c->commit, c->git_dir);
    va_start(ap, fmt);
    cn_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    rc = b.oom ? cn_error_set(CN_ENOMEM, "out of memory") : cn_error_set(code, "%s", b.data);
    cn_buf_free(&b);
    return rc;
}

/* ------------------------------------------------------- git, listing -- */

static int resolve_commit(tree_ctx *c)
{
    char spec[512], *out = NULL;
    size_t len = 0;
    int status = -1, rc;
    struct stat sb;

    if (stat(c->git_dir, &sb) != 0)
        return tree_fail(c, CN_ENOTFOUND, "the mirror does not exist (%s)", strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return tree_fail(c, CN_EIO, "the mirror is not a git directory");
    snprintf(spec, sizeof spec, "%s^{commit}", c->commit);
    const char *args[] = {"rev-parse", "--verify", "-q", spec, NULL};
    if ((rc = cn_git_capture(c->git_dir, true, args, 4096, &out, &len, &status)) < 0)
        return tree_fail(c, rc, "cannot run git (is it installed and on PATH?): %s", cn_error_last()->message);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r')) out[--len] = '\0';
    if (status == 0 && len > 0 && len < sizeof c->sha && strspn(out, "0123456789abcdef") == len) {
        memcpy(c->sha, out, len + 1);
        free(out);
        return 0;
    }
    free(out);
    /* rev-parse --verify -q answers 1 for an unknown name and 128 when the
     * directory is no repository at all */
    if (status == 1)
        return tree_fail(c, CN_ENOTFOUND, "no such commit in the mirror (fetch it, or check the dataset's base_commit)");
    return tree_fail(c, CN_EIO, "the mirror is not a git directory (git rev-parse exited with %d)", status);
}

typedef struct tree_entry {
    const char *oid;     /* into the ls-tree output */
    const char *path;
    bool exec;
} tree_entry;

typedef struct tree_list {
    char *raw;           /* ls-tree -z output, cut into NUL-terminated fields */
    tree_entry *items;
    size_t len, cap;
} tree_list;

static void tree_list_free(tree_list *l)
{
    free(l->raw);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int tree_list_push(tree_list *l, const char *oid, const char *path, bool exec)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        tree_entry *n = realloc(l->items, cap * sizeof *n);
        if (n == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
        l->items = n;
        l->cap = cap;
    }
    l->items[l->len++] = (tree_entry){oid, path, exec};
    return 0;
}

/* One record: "<mode> SP <type> SP <oid> TAB <path>". */
static int take_record(const tree_ctx *c, tree_list *l, char *rec, size_t n)
{
    char *sp1 = memchr(rec, ' ', n), *sp2, *tab, *end;
    unsigned long mode;

    if (sp1 == NULL || (sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - rec))) == NULL ||
        (tab = memchr(sp2 + 1, '\t', n - (size_t)(sp2 + 1 - rec))) == NULL)
        return tree_fail(c, CN_EIO, "git ls-tree printed an entry it should not: %.60s", rec);
    *sp1 = *sp2 = *tab = '\0';
    mode = strtoul(rec, &end, 8);
    const char *path = tab + 1;
    size_t path_len = n - (size_t)(path - rec);

    if (strcmp(sp1 + 1, "blob") == 0 && (mode & 0170000) == 0100000) c->st->listed++;
    if (!path_is_safe(path, path_len)) {
        c->st->rejected++;
        return 0;
    }
    if (!cn_eval_is_indexed(c->langs, path) && !cn_eval_is_licence(path)) {
        c->st->skipped++;
        return 0;
    }
    /* regular files only: 120000 is a symlink, 160000 a submodule */
    if (*end != '\0' || strcmp(sp1 + 1, "blob") != 0 || (mode & 0170000) != 0100000) {
        c->st->not_regular++;
        return 0;
    }
    return tree_list_push(l, sp2 + 1, path, (mode & 0111) != 0);
}

static int list_tree(const tree_ctx *c, tree_list *l)
{
    size_t len = 0, pos = 0;
    int status = -1, rc;
    const char *args[] = {"ls-tree", "-r", "-z", c->sha, NULL};

    if ((rc = cn_git_capture(c->git_dir, true, args, (size_t)1 << 30, &l->raw, &len, &status)) < 0)
        return tree_fail(c, rc, "git ls-tree: %s", cn_error_last()->message);
    if (status != 0) return tree_fail(c, CN_EIO, "git ls-tree exited with %d", status);
    while (pos < len) {
        char *rec = l->raw + pos, *nul = memchr(rec, '\0', len - pos);
        size_t n = nul ? (size_t)(nul - rec) : len - pos;
        rec[n] = '\0';      /* the output buffer is NUL-terminated past len */
        if (n > 0 && (rc = take_record(c, l, rec, n)) < 0) return rc;
        pos += n + 1;
    }
    return 0;
}

/* ------------------------------------------------ git, the blob stream -- */

/* The object names for cat-file's standard input, in a file unlinked at
 * once: git reads it at its pace while we read its output, so neither side
 * can block the other the way two pipes could. */
static int ids_file(const tree_ctx *c, const tree_list *l, int *fd_out)
{
    cn_buf b = CN_BUF_INIT;
    char *path = NULL;
    int fd = -1, rc = 0;

    for (size_t i = 0; i < l->len; i++) cn_buf_printf(&b, "%s\n", l->items[i].oid);
    if (b.oom || asprintf(&path, "%s.ids", c->tmp) < 0) {
        cn_buf_free(&b);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = tree_fail(c, CN_EIO, "cannot create %s: %s", path, strerror(errno));
    } else {
        unlink(path);
        size_t off = 0;
        while (off < b.len) {
            ssize_t k = write(fd, b.data + off, b.len - off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                rc = tree_fail(c, CN_EIO, "cannot write %s: %s", path, strerror(errno));
                break;
            }
            off += (size_t)k;
        }
        if (rc == 0 && lseek(fd, 0, SEEK_SET) != 0)
            rc = tree_fail(c, CN_EIO, "cannot rewind %s: %s", path, strerror(errno));
    }
    free(path);
    cn_buf_free(&b);
    if (rc < 0) {
        if (fd >= 0) close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

static int spawn_cat_file(const tree_ctx *c, int in_fd, pid_t *pid, int *out_fd, unsigned *timeout_ms)
{
    static const char *const args[] = {"cat-file", "--batch", NULL};
    cn_git_cmd cmd;
    int rc;

    if ((rc = cn_git_prepare(c->git_dir, true, args, &cmd)) < 0) return tree_fail(c, rc, "%s", cn_error_last()->message);
    rc = cn_proc_spawn(cmd.argv, cmd.envp, in_fd, pid, out_fd);
    *timeout_ms = cmd.timeout_ms;
    cn_git_cmd_free(&cmd);
    if (rc < 0) return tree_fail(c, rc, "cannot run git cat-file: %s", cn_error_last()->message);
    return 0;
}

/* Buffered reading of cat-file's output. */
typedef struct reader {
    int fd;
    unsigned timeout_ms;  /* git silent that long: stopped */
    size_t pos, len;
    char buf[1 << 16];
} reader;

/* 1 when bytes are buffered, 0 at end of stream, -errno. */
static int reader_fill(reader *r)
{
    if (r->pos < r->len) return 1;
    for (;;) {
        struct pollfd p = {r->fd, POLLIN, 0};
        int ready = poll(&p, 1, (int)r->timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return -ETIMEDOUT;
        ssize_t k = read(r->fd, r->buf, sizeof r->buf);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -errno;
        r->pos = 0;
        r->len = (size_t)k;
        return k > 0;
    }
}

/* A header line (without its '\n') into line[cap]; 0 at end of stream,
 * 1 for a line, -EOVERFLOW / -errno. */
static int reader_line(reader *r, char *line, size_t cap)
{
    size_t n = 0;
    int f;
    while ((f = reader_fill(r)) > 0) {
        char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        size_t take = nl ? (size_t)(nl - (r->buf + r->pos)) : r->len - r->pos;
        if (n + take >= cap) return -EOVERFLOW;
        memcpy(line + n, r->buf + r->pos, take);
        n += take;
        r->pos += take + (nl ? 1 : 0);
        if (nl) {
            line[n] = '\0';
            return 1;
        }
    }
    return f < 0 ? f : (n > 0 ? -EPIPE : 0);
}

/* Copies `size` bytes to fd (or drops them when fd < 0). */
static int reader_copy(reader *r, unsigned long long size, int fd)
{
    while (size > 0) {
        int f = reader_fill(r);
        if (f <= 0) return f < 0 ? f : -EPIPE;
        size_t take = r->len - r->pos;
        if (take > size) take = (size_t)size;
        for (size_t off = 0; fd >= 0 && off < take;) {
            ssize_t k = write(fd, r->buf + r->pos + off, take - off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return k < 0 ? -errno : -EIO;
            off += (size_t)k;
        }
        r->pos += take;
        size -= take;
    }
    return 0;
}

/* Opens TMP/path for writing, creating its directories.  -EEXIST for a
 * name written already (a hostile tree), -errno otherwise. */
static int open_dest_file(const tree_ctx *c, const tree_entry *e, cn_buf *full, char *scratch)
{
    int fd, r;
    cn_buf_reset(full);
    cn_buf_printf(full, "%s/%s", c->tmp, e->path);
    if (full->oom) return -ENOMEM;
    if ((r = make_parents(full->data, scratch)) < 0) return r;
    fd = open(full->data, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -errno;
    /* exact modes whatever the umask: the copy stands for the commit */
    if (fchmod(fd, e->exec ? 0755 : 0644) != 0) {
        r = -errno;
        close(fd);
        return r;
    }
    return fd;
}

/* One blob of the stream: header, content, trailing newline. */
static int take_blob(const tree_ctx *c, reader *r, const tree_entry *e, cn_buf *full, char *scratch)
{
    char line[256], *sp, *end;
    unsigned long long size;
    int fd, k;

    if ((k = reader_line(r, line, sizeof line)) == -ETIMEDOUT)
        return tree_fail(c, CN_ETIMEOUT, "git cat-file printed nothing for %u s (at %s) and was stopped; "
                         "CODENIB_GIT_TIMEOUT sets the limit", (r->timeout_ms + 999) / 1000, e->path);
    if (k <= 0)
        return tree_fail(c, CN_EIO, "git cat-file stopped before %s (%s)", e->path,
                         k == 0 ? "end of output" : strerror(-k));
    sp = strchr(line, ' ');
    if (sp == NULL || (size_t)(sp - line) != strlen(e->oid) || memcmp(line, e->oid, (size_t)(sp - line)) != 0)
        return tree_fail(c, CN_EIO, "git cat-file answered \"%s\" for %s %s", line, e->oid, e->path);
    if (strcmp(sp + 1, "missing") == 0) {
        c->st->missing++;
        return 0;
    }
    if (strncmp(sp + 1, "blob ", 5) != 0 || (size = strtoull(sp + 6, &end, 10), *end != '\0'))
        return tree_fail(c, CN_EIO, "git cat-file answered \"%s\" for %s", line, e->path);
    fd = open_dest_file(c, e, full, scratch);
    if (fd == -EEXIST) c->st->rejected++;
    else if (fd < 0)
        return tree_fail(c, fd == -ENOMEM ? CN_ENOMEM : CN_EIO, "cannot create %s: %s",
                         full->data ? full->data : e->path, strerror(-fd));
    k = reader_copy(r, size, fd);
    if (fd >= 0 && close(fd) != 0 && k == 0) k = -errno;
    if (k < 0) return tree_fail(c, CN_EIO, "writing %s: %s", full->data, strerror(-k));
    if ((k = reader_copy(r, 1, -1)) < 0)
        return tree_fail(c, CN_EIO, "git cat-file output ends inside %s", e->path);
    /* the licence files written beside them are not indexed files: a
     * commit with nothing else still has no file to index */
    if (fd >= 0 && cn_eval_is_indexed(c->langs, e->path)) {
        c->st->files++;
        c->st->bytes += size;
    }
    return 0;
}

static int stream_blobs(const tree_ctx *c, const tree_list *l)
{
    reader *r;
    cn_buf full = CN_BUF_INIT;
    char *scratch = NULL;
    size_t longest = 0;
    int in_fd = -1, st = 0, rc;
    pid_t pid;

    if (l->len == 0) return 0;
    for (size_t i = 0; i < l->len; i++)
        if (strlen(l->items[i].path) > longest) longest = strlen(l->items[i].path);
    if ((r = malloc(sizeof *r)) == NULL || (scratch = malloc(strlen(c->tmp) + longest + 2)) == NULL) {
        free(r);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    r->pos = r->len = 0;
    if ((rc = ids_file(c, l, &in_fd)) == 0) rc = spawn_cat_file(c, in_fd, &pid, &r->fd, &r->timeout_ms);
    if (in_fd >= 0) close(in_fd);
    if (rc == 0) {
        for (size_t i = 0; i < l->len && rc == 0; i++) rc = take_blob(c, r, &l->items[i], &full, scratch);
        /* on an early stop (an error, or git silent for too long) git
         * goes; either way reap it */
        if (rc < 0) cn_proc_kill(pid);
        close(r->fd);
        st = cn_proc_wait(pid);
        if (rc == 0 && st != 0) rc = tree_fail(c, CN_EIO, "git cat-file --batch failed (status %d)", st);
    }
    cn_buf_free(&full);
    free(scratch);
    free(r);
    return rc;
}

/* -------------------------------------------------------- materialise -- */

static atomic_uint tmp_counter;

/* A fresh sibling temporary directory; a leftover of a crashed run with
 * the same name is cleared first. */
static int make_tmp(tree_ctx *c, const char *dest)
{
    char *scratch;
    int r;

    if (asprintf(&c->tmp, "%s.tmp-%ld-%u", dest, (long)getpid(), atomic_fetch_add(&tmp_counter, 1)) < 0) {
        c->tmp = NULL;
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    if ((scratch = malloc(strlen(c->tmp) + 1)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    r = make_parents(c->tmp, scratch);
    free(scratch);
    if (r < 0) return tree_fail(c, CN_EIO, "cannot create the parents of %s: %s", c->tmp, strerror(-r));
    (void)remove_tree_quiet(c->tmp);
    if (mkdir(c->tmp, 0755) != 0) return tree_fail(c, CN_EIO, "cannot create %s: %s", c->tmp, strerror(errno));
    return 0;
}

static int publish(tree_ctx *c, const char *dest)
{
    int e;
    if (rename(c->tmp, dest) == 0) return 0;
    e = errno;
    /* another job published the same commit first: use theirs */
    if (e == EEXIST || e == ENOTEMPTY) {
        struct stat sb;
        if (stat(dest, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            (void)remove_tree_quiet(c->tmp);
            count_reused(dest, c->langs, c->st);
            return 0;
        }
    }
    return tree_fail(c, CN_EIO, "cannot rename %s to %s: %s", c->tmp, dest, strerror(e));
}

static int materialize(tree_ctx *c, const char *dest)
{
    tree_list l;
    struct stat sb;
    int rc;

    memset(&l, 0, sizeof l);
    if (lstat(dest, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode))
            return tree_fail(c, CN_EINVAL, "%s exists and is not a directory (remove it)", dest);
        count_reused(dest, c->langs, c->st);
        /* an empty cache: say how many files the commit has, for the
         * reason the instance cannot run */
        if (c->st->files == 0 && resolve_commit(c) == 0 && list_tree(c, &l) == 0) {
            size_t listed = c->st->listed;
            memset(c->st, 0, sizeof *c->st);
            c->st->reused = true;
            c->st->listed = listed;
        }
        tree_list_free(&l);
        return 0;
    }
    if ((rc = resolve_commit(c)) == 0 && (rc = list_tree(c, &l)) == 0 && (rc = make_tmp(c, dest)) == 0 &&
        (rc = stream_blobs(c, &l)) == 0)
        rc = publish(c, dest);
    if (rc < 0 && c->tmp != NULL) (void)remove_tree_quiet(c->tmp);
    tree_list_free(&l);
    return rc;
}

int cn_eval_tree_materialize(const char *git_dir, const char *commit, const cn_eval_langs *langs,
                             const char *dest, cn_eval_tree_stats *st)
{
    cn_eval_tree_stats local;
    tree_ctx c;
    char *d;
    size_t n;
    int rc;

    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    memset(&c, 0, sizeof c);
    c.git_dir = git_dir ? git_dir : "(none)";
    c.commit = commit ? commit : "(none)";
    c.st = st;
    c.langs = langs;
    if (langs == NULL) return tree_fail(&c, CN_EINVAL, "no languages given");
    if (git_dir == NULL || *git_dir == '\0' || dest == NULL || *dest == '\0')
        return tree_fail(&c, CN_EINVAL, "no mirror or no destination given");
    /* a name starting with '-' would reach git as an option */
    if (commit == NULL || *commit == '\0' || *commit == '-' || strlen(commit) > 256)
        return tree_fail(&c, CN_EINVAL, "not a commit name");
    /* "out/" must give the sibling "out.tmp-...", not a directory inside it */
    if ((d = cn_strdup(dest)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    for (n = strlen(d); n > 1 && d[n - 1] == '/'; n--) d[n - 1] = '\0';
    rc = materialize(&c, d);
    free(d);
    free(c.tmp);
    return rc;
}
