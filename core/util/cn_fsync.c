/* SPDX-License-Identifier: Apache-2.0 */
/* fsync(2) off the writer's thread, for files written into a directory
 * that nothing reads until it is published (see cn_util.h).
 *
 * On the disks codenib meets (ext4 without a journal on a virtual disk,
 * here), every fsync waits for the file's pages and a cache flush: one or
 * two milliseconds each, seven times per compile, on the threads that
 * build the indexes.  Files written into a registered directory are
 * renamed into place at once and synced by one thread of the directory's
 * own, while the build goes on; cn_fsync_dir_finish waits for them before
 * the directory is published. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cn_util.h"

typedef struct item {
    int fd;
    char *path;
    struct item *next;
} item;

typedef struct syncer {
    char *dir;
    size_t dir_len;
    pthread_t tid;
    pthread_cond_t cv;
    item *head, *tail;
    bool closing;
    int rc;             /* the first failure */
    char err[512];
    struct syncer *next;
} syncer;

/* every registered directory; one mutex guards the list and every queue */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static syncer *all;

static void *run(void *data)
{
    syncer *s = data;
    pthread_mutex_lock(&mu);
    for (;;) {
        item *it = s->head;
        if (it == NULL) {
            if (s->closing) break;
            pthread_cond_wait(&s->cv, &mu);
            continue;
        }
        s->head = it->next;
        if (s->head == NULL) s->tail = NULL;
        pthread_mutex_unlock(&mu);
        {
            int bad = fsync(it->fd) != 0 ? errno : 0;
            if (close(it->fd) != 0 && bad == 0 && errno != EINTR) bad = errno;
            pthread_mutex_lock(&mu);
            if (bad && s->rc == 0) {
                s->rc = CN_EIO;
                snprintf(s->err, sizeof s->err, "%s: fsync failed: %s", it->path, strerror(bad));
            }
            pthread_mutex_unlock(&mu);
        }
        free(it->path);
        free(it);
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

int cn_fsync_dir_begin(const char *dir)
{
    syncer *s = calloc(1, sizeof *s);
    if (s == NULL || (s->dir = cn_strdup(dir)) == NULL) {
        free(s);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    s->dir_len = strlen(dir);
    while (s->dir_len > 1 && s->dir[s->dir_len - 1] == '/') s->dir[--s->dir_len] = '\0';
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->tid, NULL, run, s) != 0) {
        pthread_cond_destroy(&s->cv);
        free(s->dir);
        free(s);
        return 0;   /* no thread to be had: files are synced as they are written */
    }
    pthread_mutex_lock(&mu);
    s->next = all;
    all = s;
    pthread_mutex_unlock(&mu);
    return 0;
}

/* The syncer of the directory that holds `path` directly; under mu. */
static syncer *find(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    for (syncer *s = all; s != NULL; s = s->next)
        if (s->dir_len == n && memcmp(s->dir, path, n) == 0 && !s->closing) return s;
    return NULL;
}

bool cn_fsync_defer(int fd, const char *path)
{
    syncer *s;
    item *it = malloc(sizeof *it);
    char *p = it ? cn_strdup(path) : NULL;

    pthread_mutex_lock(&mu);
    s = p ? find(path) : NULL;
    if (s != NULL) {
        it->fd = fd;
        it->path = p;
        it->next = NULL;
        if (s->tail) s->tail->next = it;
        else s->head = it;
        s->tail = it;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&mu);
    if (s != NULL) return true;
    free(p);
    free(it);
    return false;
}

int cn_fsync_dir_finish(const char *dir)
{
    syncer *s = NULL, **pp;
    size_t n = strlen(dir);
    int rc;

    while (n > 1 && dir[n - 1] == '/') n--;
    pthread_mutex_lock(&mu);
    for (pp = &all; *pp != NULL; pp = &(*pp)->next)
        if ((*pp)->dir_len == n && memcmp((*pp)->dir, dir, n) == 0) {
            s = *pp;
            *pp = s->next;
            break;
        }
    if (s != NULL) {
        s->closing = true;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&mu);
    if (s == NULL) return 0;   /* never begun (or no thread): synced inline */
    pthread_join(s->tid, NULL);
    rc = s->rc ? cn_error_set(s->rc, "%s", s->err) : 0;
    pthread_cond_destroy(&s->cv);
    free(s->dir);
    free(s);
    return rc;
}
