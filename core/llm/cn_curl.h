/* SPDX-License-Identifier: Apache-2.0 */
/* The part of libcurl the HTTP client uses, loaded with dlopen(3) on the
 * first request rather than linked: processes that never talk to a model
 * (compile, offline queries, skill runs) start without it. */
#ifndef CN_CURL_H
#define CN_CURL_H

#include <stdbool.h>

#include <curl/curl.h>

/* The library configure found (its SONAME), unless CODENIB_LIBCURL names
 * another file. */
#ifndef CN_LIBCURL_SONAME
#define CN_LIBCURL_SONAME "libcurl.so.4"
#endif

typedef struct cn_curl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *c);
    CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *c);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
} cn_curl_api;

/* The library to load: $CODENIB_LIBCURL, else CN_LIBCURL_SONAME. */
const char *cn_curl_library(void);

/* libcurl, loaded and initialised (curl_global_init) once per process,
 * thread-safe.  NULL with the error set (CN_ENETWORK: which library, why,
 * what to install) when it cannot be loaded; the same answer every time. */
const cn_curl_api *cn_curl(void);

#endif /* CN_CURL_H */
