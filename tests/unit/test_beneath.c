/* SPDX-License-Identifier: Apache-2.0 */
/* cn_beneath: repository paths opened beneath the root's descriptor, with
 * openat2 and with the component walk it falls back to: the same answers
 * both ways on files, directories, links (inside and out, on the way and
 * at the end), FIFOs and malformed paths.  The race itself is in
 * test_confine_race. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/util/cn_beneath.h"
#include "../../core/util/cn_util.h"
#include "tap.h"

static char base[2048], root[4096];

static void put(const char *rel, const char *text)
{
    char p[8192];
    FILE *f;
    snprintf(p, sizeof p, "%s/%s", base, rel);
    if ((f = fopen(p, "w")) == NULL || fputs(text, f) < 0) {
        printf("Bail out! cannot write %s\n", p);
        exit(1);
    }
    fclose(f);
}

static void at(const char *rel, char *p, size_t n)
{
    snprintf(p, n, "%s/%s", base, rel);
}

static void make_tree(void)
{
    char tmpl[] = "/tmp/cn-beneath-XXXXXX", p[8192], q[8192];
    char *real;
    if (mkdtemp(tmpl) == NULL || (real = realpath(tmpl, NULL)) == NULL) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        exit(1);
    }
    snprintf(base, sizeof base, "%s", real);
    free(real);
    snprintf(root, sizeof root, "%s/repo", base);
    at("repo", p, sizeof p);
    mkdir(p, 0755);
    at("repo/sub", p, sizeof p);
    mkdir(p, 0755);
    at("out", p, sizeof p);
    mkdir(p, 0755);
    put("repo/a.txt", "inside\n");
    put("repo/sub/b.txt", "inside b\n");
    put("out/secret.txt", "secret\n");
    at("repo/link_in", p, sizeof p);
    if (symlink("a.txt", p) != 0) printf("# symlink: %s\n", strerror(errno));
    at("repo/link_dir_in", p, sizeof p);
    if (symlink("sub", p) != 0) printf("# symlink: %s\n", strerror(errno));
    at("repo/link_out", p, sizeof p);
    at("out", q, sizeof q);
    if (symlink(q, p) != 0) printf("# symlink: %s\n", strerror(errno));
    at("repo/fifo", p, sizeof p);
    if (mkfifo(p, 0644) != 0) printf("# mkfifo: %s\n", strerror(errno));
}

typedef int (*opener)(int, const char *, int);

/* opens rel, checks the code, and closes what was opened */
static void expect_open(opener f, const char *how, int rootfd, const char *rel, int flags,
                        int want, const char *needle)
{
    char what[512];
    int fd = f(rootfd, rel, flags);
    snprintf(what, sizeof what, "%s: '%s' %s", how, rel, want == 0 ? "opens" : "is refused");
    if (want == 0) {
        if (!ok(fd >= 0, what)) diag("%s", cn_error_last()->message);
    } else {
        is_int(fd < 0 ? fd : 0, want, what);
        if (fd < 0 && needle) {
            snprintf(what, sizeof what, "%s: '%s' message", how, rel);
            has_str(cn_error_last()->message, needle, what);
        }
    }
    if (fd >= 0) close(fd);
    cn_error_clear();
}

static void test_opens(opener f, const char *how, int rootfd)
{
    expect_open(f, how, rootfd, "a.txt", O_RDONLY, 0, NULL);
    expect_open(f, how, rootfd, "sub/b.txt", O_RDONLY, 0, NULL);
    expect_open(f, how, rootfd, "sub", O_RDONLY | O_DIRECTORY, 0, NULL);
    expect_open(f, how, rootfd, "sub", O_PATH, 0, NULL);
    expect_open(f, how, rootfd, "fifo", O_RDONLY | O_NONBLOCK, 0, NULL);
    expect_open(f, how, rootfd, "link_in", O_RDONLY, CN_EDENIED, "symbolic link");
    expect_open(f, how, rootfd, "link_in", O_PATH, CN_EDENIED, "symbolic link");
    expect_open(f, how, rootfd, "link_dir_in/b.txt", O_RDONLY, CN_EDENIED, "symbolic link");
    expect_open(f, how, rootfd, "link_out/secret.txt", O_RDONLY, CN_EDENIED, "symbolic link");
    expect_open(f, how, rootfd, "link_out/secret.txt", O_PATH, CN_EDENIED, "symbolic link");
    expect_open(f, how, rootfd, "missing.txt", O_RDONLY, CN_ENOTFOUND, "missing.txt");
    expect_open(f, how, rootfd, "a.txt/x", O_RDONLY, CN_ENOTFOUND, NULL);
    expect_open(f, how, rootfd, "../out/secret.txt", O_RDONLY, CN_EDENIED, "'..' is refused");
    expect_open(f, how, rootfd, "/etc/hostname", O_RDONLY, CN_EDENIED, "absolute");
    expect_open(f, how, rootfd, "sub//b.txt", O_RDONLY, CN_EINVAL, "empty or '.'");
    expect_open(f, how, rootfd, "./a.txt", O_RDONLY, CN_EINVAL, "empty or '.'");
    expect_open(f, how, rootfd, "sub/", O_RDONLY, CN_EINVAL, "empty or '.'");
    expect_open(f, how, rootfd, "", O_RDONLY, CN_EINVAL, "empty path");
}

static void test_directory_flag(int rootfd)
{
    expect_open(cn_open_beneath, "O_DIRECTORY", rootfd, "a.txt", O_RDONLY | O_DIRECTORY,
                CN_ENOTFOUND, "Not a directory");
    expect_open(cn_open_beneath, "O_DIRECTORY", rootfd, "link_dir_in", O_RDONLY | O_DIRECTORY,
                CN_EDENIED, "symbolic link");
    expect_open(cn_open_beneath, "O_DIRECTORY", rootfd, "link_out", O_PATH | O_DIRECTORY,
                CN_EDENIED, "symbolic link");
}

static void test_read(int rootfd)
{
    char *data = NULL;
    size_t len = 0;
    is_int(cn_read_beneath(rootfd, "sub/b.txt", 0, &data, &len), 0, "read: a file");
    is_str(data, "inside b\n", "read: its content");
    is_int(len, 9, "read: its length");
    free(data);
    is_int(cn_read_beneath(rootfd, "fifo", 0, &data, &len), CN_EIO,
           "read: a FIFO is refused, without blocking");
    ok(data == NULL && len == 0, "read: nothing handed back on failure");
    is_int(cn_read_beneath(rootfd, "a.txt", 3, &data, &len), CN_EINVAL, "read: over max_bytes");
    cn_error_clear();
}

static void clean(const char *in, int want, const char *out)
{
    char *rel = NULL, what[256];
    int rc = cn_beneath_clean(in, &rel);
    snprintf(what, sizeof what, "clean '%s'", in ? in : "(null)");
    if (is_int(rc, want, what) && want == 0) is_str(rel, out, what);
    free(rel);
    cn_error_clear();
}

int main(void)
{
    int rootfd;
    make_tree();
    if ((rootfd = open(root, O_RDONLY | O_DIRECTORY)) < 0) {
        printf("Bail out! open %s: %s\n", root, strerror(errno));
        return 1;
    }
    test_opens(cn_open_beneath, "open_beneath", rootfd);
    test_opens(cn_beneath__walk, "walk", rootfd);
    test_directory_flag(rootfd);
    test_read(rootfd);
    clean(NULL, 0, "");
    clean(".", 0, "");
    clean("./", 0, "");
    clean("./src//a.c", 0, "src/a.c");
    clean("src/./a.c/", 0, "src/a.c");
    clean("..notparent", 0, "..notparent");
    clean("a/../b", CN_EDENIED, NULL);
    clean("/etc", CN_EDENIED, NULL);
    close(rootfd);
    {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd) != 0) diag("could not remove %s", base);
    }
    return tap_done();
}
