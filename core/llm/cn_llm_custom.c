/* SPDX-License-Identifier: Apache-2.0 */
/* Chat handles backed by an application's function (cn_chat_client of
 * <codenib/codenib.h>) rather than an HTTP endpoint.  The request body is
 * the one an endpoint would get; the reply is held to the same checks
 * (size, JSON, the chat-completions shape in cn_llm_chat), so a client
 * that answers garbage fails one call with a message, as a server would. */
#include <stdlib.h>
#include <string.h>

#include <codenib/codenib.h>

#include "../plugin/cn_host.h"
#include "cn_llm.h"

#define CLIENT_WHERE "the application's chat client"

int cn_llm_open_client(const cn_chat_client *client, cn_model **out)
{
    cn_model *m;
    const char *name;

    *out = NULL;
    if (client == NULL || client->struct_size < offsetof(cn_chat_client, data) + sizeof(void *))
        return cn_error_set(CN_EINVAL, "%s: missing or too small (set struct_size to sizeof(cn_chat_client))",
                            CLIENT_WHERE);
    if (client->chat == NULL) return cn_error_set(CN_EINVAL, "%s: its chat function is NULL", CLIENT_WHERE);
    if ((m = calloc(1, sizeof *m)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    name = client->model != NULL && client->model[0] != '\0' ? client->model : "client";
    m->role = CN_LLM_CHAT;
    m->base_url = cn_strdup(CLIENT_WHERE);
    m->model = cn_strdup(name);
    m->max_retries = 0;
    m->max_response_bytes = (size_t)16 << 20;
    m->client_chat = client->chat;
    m->client_data = client->data;
    if (m->base_url == NULL || m->model == NULL) {
        cn_llm_close(m);
        return cn_error_set(CN_ENOMEM, "out of memory");
    }
    *out = m;
    return 0;
}

int cn_llm__client_post(cn_model *m, const char *endpoint, json_object *body, cn_llm_call *call,
                        json_object **response)
{
    cn_error err;
    char *text, *reply = NULL;
    size_t len;
    int rc;

    *response = NULL;
    call->endpoint = endpoint;
    call->attempts = 1;
    if (strcmp(endpoint, "chat/completions") != 0)
        return cn_error_set(CN_EUNSUPPORTED, "%s: %s answers chat requests only; configure an %s endpoint "
                                             "for this", endpoint, CLIENT_WHERE, endpoint);
    if ((text = cn_json_text(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) == NULL)
        return cn_error_set(CN_ENOMEM, "%s: out of memory preparing the request", endpoint);
    memset(&err, 0, sizeof err);
    rc = m->client_chat(m->client_data, text, &reply, &err);
    free(text);
    if (rc < 0 || (rc > 0 && reply == NULL)) {
        err.message[sizeof err.message - 1] = '\0';
        free(reply);
        return cn_error_set(rc < 0 ? rc : CN_ERR, "%s: %s failed: %s", endpoint, CLIENT_WHERE,
                            err.message[0] ? err.message : "(it gave no message)");
    }
    if (reply == NULL)
        return cn_error_set(CN_EPARSE, "%s: %s returned success but no reply", endpoint, CLIENT_WHERE);
    len = strlen(reply);
    if (len > m->max_response_bytes) {
        free(reply);
        return cn_error_set(CN_EPARSE, "%s: the reply of %s is %zu bytes, more than the %zu allowed", endpoint,
                            CLIENT_WHERE, len, m->max_response_bytes);
    }
    rc = cn_json_parse(reply, "the reply of " CLIENT_WHERE, response);
    free(reply);
    if (rc < 0) return rc;
    if (*response == NULL)
        return cn_error_set(CN_EPARSE, "%s: the reply of %s is JSON null", endpoint, CLIENT_WHERE);
    call->http_status = 200;
    return 0;
}

cn_model *cn_llm_ref(cn_model *m)
{
    if (m == NULL) return NULL;
    pthread_mutex_lock(&m->lock);
    m->refs++;
    pthread_mutex_unlock(&m->lock);
    return m;
}
