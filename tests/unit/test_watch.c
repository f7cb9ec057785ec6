/* SPDX-License-Identifier: Apache-2.0 */
/* cn_watch (core/serve/cn_watch.c): which changes below a repository are
 * seen, which directories are left unwatched, and the limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/cn_watch.h"
#include "tap.h"
#include "util/cn_util.h"

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[256];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if ((f = fopen(path, "w")) == NULL) {
        diag("cannot write %s", path);
        return;
    }
    fputs(text, f);
    fclose(f);
}

static void dir(const char *rel)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (mkdir(path, 0755) != 0) diag("cannot make %s", path);
}

int main(void)
{
    cn_watch_opts o;
    cn_watch *w = NULL;
    char path[256], cmd[300], cache[256];

    snprintf(root, sizeof root, "/tmp/cn-watch.XXXXXX");
    if (mkdtemp(root) == NULL) {
        ok(0, "temporary directory");
        return tap_done();
    }
    dir("pkg");
    dir("pkg/sub");
    dir(".git");
    dir("node_modules");
    dir("cache");
    put("pkg/a.py", "x = 1\n");
    put("pkg/sub/b.py", "y = 2\n");
    snprintf(cache, sizeof cache, "%s/cache", root);

    memset(&o, 0, sizeof o);
    o.skip_dir = cache;
    o.skip_default_excludes = true;
    if (cn_watch_open(root, &o, &w) < 0) {
        /* a machine without inotify: the server compares every time */
        printf("1..0 # SKIP no inotify here: %s\n", cn_error_last()->message);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : 1;
    }
    ok(!cn_watch_changed(w), "nothing changed right after watching");
    put("pkg/sub/b.py", "y = 3\n");
    ok(cn_watch_changed(w), "a file rewritten in a subdirectory: changed");
    ok(!cn_watch_changed(w), "... and the events are drained by the look");
    put("pkg/new.py", "z = 1\n");
    ok(cn_watch_changed(w), "a file created: changed");
    snprintf(path, sizeof path, "%s/pkg/a.py", root);
    ok(unlink(path) == 0 && cn_watch_changed(w), "a file removed: changed");
    snprintf(cmd, sizeof cmd, "%s/pkg/new.py", root);
    ok(rename(cmd, path) == 0 && cn_watch_changed(w), "a file renamed: changed");
    snprintf(cmd, sizeof cmd, "touch '%s/pkg/sub/b.py'", root);
    ok(system(cmd) == 0 && cn_watch_changed(w), "a file touched (its stamp moved): changed");
    {
        FILE *f;
        char buf[16];
        snprintf(path, sizeof path, "%s/pkg/sub/b.py", root);
        f = fopen(path, "r");
        ok(f != NULL && fgets(buf, sizeof buf, f) != NULL, "a file read");
        if (f) fclose(f);
        ok(!cn_watch_changed(w), "... is no change");
    }
    put(".git/index", "x");
    ok(!cn_watch_changed(w), "a write inside .git: not watched");
    put("node_modules/m.js", "x");
    ok(!cn_watch_changed(w), "a write inside node_modules (excluded by default): not watched");
    put("cache/gen.bin", "x");
    ok(!cn_watch_changed(w), "a write inside the skipped cache directory: not watched");
    dir("pkg/sub/deeper");
    ok(cn_watch_changed(w), "a directory created: changed");
    put("pkg/sub/deeper/c.py", "w = 1\n");
    ok(!cn_watch_changed(w), "a file in a directory made after watching: not seen (the caller re-arms)");
    cn_watch_close(w);

    /* re-armed, the new directory is watched; default excludes can be kept */
    o.skip_default_excludes = false;
    ok(cn_watch_open(root, &o, &w) == 0, "watching again");
    put("pkg/sub/deeper/c.py", "w = 2\n");
    ok(cn_watch_changed(w), "the new directory is watched once re-armed");
    put("node_modules/m.js", "y");
    ok(cn_watch_changed(w), "node_modules is watched when the index covers it");
    cn_watch_close(w);

    /* a symbolic link to a directory is not followed */
    snprintf(path, sizeof path, "%s/link", root);
    snprintf(cmd, sizeof cmd, "%s/pkg", root);
    ok(symlink(cmd, path) == 0, "a symbolic link to pkg/");
    o.max_dirs = 4;   /* root, pkg, pkg/sub, pkg/sub/deeper (and node_modules, cache skipped below) */
    o.skip_default_excludes = true;
    ok(cn_watch_open(root, &o, &w) == 0, "4 directories fit max_dirs 4: the link is not followed");
    cn_watch_close(w);
    o.max_dirs = 3;
    w = (cn_watch *)1;
    is_int(cn_watch_open(root, &o, &w), CN_EUNSUPPORTED, "more directories than max_dirs: unsupported");
    has_str(cn_error_last()->message, "more than 3 directories", "... saying how many");
    ok(w == NULL, "... and no watch");
    ok(cn_watch_open("/nonexistent/dir", NULL, &w) == CN_EUNSUPPORTED && w == NULL,
       "a missing root: unsupported, no watch");

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) diag("could not remove %s", root);
    return tap_done();
}
