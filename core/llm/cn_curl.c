/* SPDX-License-Identifier: Apache-2.0 */
/* libcurl, loaded the first time a request is made (see cn_curl.h).
 *
 * Linked in, libcurl and the TLS, LDAP, SSH and Kerberos libraries it
 * brings would be mapped and relocated by every codenib process: about
 * 6 ms of each start, most of a cold query, for a library that only the
 * model and embedding clients use. */
#include "cn_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cn_util.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cn_curl_api api;
static bool loaded;
static char why[512];

static void *sym(void *h, const char *name, bool *ok)
{
    void *p = dlsym(h, name);
    if (p == NULL && *ok) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "%s has no %s (%s)", cn_curl_library(), name, e ? e : "missing");
        *ok = false;
    }
    return p;
}

static void load(void)
{
    const char *lib = cn_curl_library();
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    bool ok = true;

    if (h == NULL) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "cannot load %s (%s); install libcurl4, or point CODENIB_LIBCURL at it", lib,
                 e ? e : "not found");
        return;
    }
    /* dlsym's object pointers become function pointers by copying their
     * bytes, as POSIX allows */
#define LOAD(field, name)                           \
    do {                                            \
        void *p_ = sym(h, name, &ok);               \
        memcpy(&api.field, &p_, sizeof p_);         \
    } while (0)
    LOAD(global_init, "curl_global_init");
    LOAD(easy_init, "curl_easy_init");
    LOAD(easy_setopt, "curl_easy_setopt");
    LOAD(easy_perform, "curl_easy_perform");
    LOAD(easy_getinfo, "curl_easy_getinfo");
    LOAD(easy_cleanup, "curl_easy_cleanup");
    LOAD(easy_strerror, "curl_easy_strerror");
    LOAD(slist_append, "curl_slist_append");
    LOAD(slist_free_all, "curl_slist_free_all");
#undef LOAD
    if (!ok) {
        dlclose(h);
        return;
    }
    /* curl_global_init is not thread-safe in older libcurl: here, once */
    {
        CURLcode rc = api.global_init(CURL_GLOBAL_DEFAULT);
        if (rc != CURLE_OK) {
            snprintf(why, sizeof why, "libcurl (%s) could not be initialised: %s", lib, api.easy_strerror(rc));
            return;   /* kept loaded: a library that initialised half may not unload cleanly */
        }
    }
    loaded = true;   /* and never unloaded: TLS libraries do not take it well */
}

const char *cn_curl_library(void)
{
    const char *env = getenv("CODENIB_LIBCURL");
    return env && *env ? env : CN_LIBCURL_SONAME;
}

const cn_curl_api *cn_curl(void)
{
    pthread_once(&once, load);
    if (!loaded) {
        cn_error_set(CN_ENETWORK, "%s", why);
        return NULL;
    }
    return &api;
}
