/* SPDX-License-Identifier: Apache-2.0 */
/* libltdl behind a lock.  libltdl's error state and module list are
 * process-global, so concurrent registries must not race on them. */
#include "cn_dl.h"

#include <ltdl.h>
#include <pthread.h>
#include <stdlib.h>

#include "../util/cn_util.h"

struct cn_dl {
    lt_dlhandle handle;
};

static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned dl_users;

int cn_dl_open(const char *path, cn_dl **out)
{
    lt_dladvise advise;
    lt_dlhandle h = NULL;
    const char *why = NULL;
    cn_dl *dl;

    *out = NULL;
    dl = calloc(1, sizeof *dl);
    if (dl == NULL) return cn_error_set(CN_ENOMEM, "out of memory opening %s", path);

    pthread_mutex_lock(&dl_lock);
    if (dl_users == 0 && lt_dlinit() != 0) {
        why = lt_dlerror();
        pthread_mutex_unlock(&dl_lock);
        free(dl);
        return cn_error_set(CN_ELOAD, "cannot initialise the plugin loader: %s",
                            why ? why : "unknown error");
    }
    dl_users++;
    if (lt_dladvise_init(&advise) == 0) {
        lt_dladvise_local(&advise);
        h = lt_dlopenadvise(path, advise);
        lt_dladvise_destroy(&advise);
    }
    if (h == NULL) {
        why = lt_dlerror();
        int rc = cn_error_set(CN_ELOAD, "cannot open %s: %s", path, why ? why : "unknown error");
        if (--dl_users == 0) lt_dlexit();
        pthread_mutex_unlock(&dl_lock);
        free(dl);
        return rc;
    }
    pthread_mutex_unlock(&dl_lock);
    dl->handle = h;
    *out = dl;
    return 0;
}

void *cn_dl_sym(cn_dl *dl, const char *name)
{
    void *p;
    pthread_mutex_lock(&dl_lock);
    p = lt_dlsym(dl->handle, name);
    pthread_mutex_unlock(&dl_lock);
    return p;
}

void cn_dl_close(cn_dl *dl)
{
    if (dl == NULL) return;
    pthread_mutex_lock(&dl_lock);
    lt_dlclose(dl->handle);
    if (--dl_users == 0) lt_dlexit();
    pthread_mutex_unlock(&dl_lock);
    free(dl);
}
