/* SPDX-License-Identifier: Apache-2.0 */
/* JSON-RPC as the servers receive it: the two framings (core/serve/
 * cn_frame.c) and every message through the MCP and LSP servers' handlers
 * (cn_mcp.c, cn_lsp.c, over a small repository made at start-up, nothing
 * compiled) or the bare dispatcher (cn_jsonrpc.c).  The first byte picks
 * the way; the rest is the byte stream a client sent.  Properties: every
 * reply is one line of valid UTF-8 JSON, and nothing the client sends
 * crashes or hangs a server. */
#include "fuzz.h"

#include <sys/stat.h>
#include <unistd.h>

#include "serve/cn_frame.h"
#include "serve/cn_jsonrpc.h"
#include "serve/cn_lsp.h"
#include "serve/cn_mcp.h"

static char root[64], repo[96], cache[96];

static void rm_rf(const char *path)
{
    char cmd[256];
    /* our own temporary directory, named by mkdtemp */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_jsonrpc: could not remove %s\n", path);
}

static void cleanup(void)
{
    rm_rf(root);
}

static void put_file(const char *rel, const char *text)
{
    char p[256];
    FILE *f;
    snprintf(p, sizeof p, "%s/%s", repo, rel);
    if ((f = fopen(p, "w")) == NULL) abort();
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    char p[160];
    snprintf(root, sizeof root, "%s/cn-fuzz-rpc.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (mkdtemp(root) == NULL) abort();
    atexit(cleanup);
    snprintf(repo, sizeof repo, "%s/repo", root);
    snprintf(cache, sizeof cache, "%s/cache", root);
    snprintf(p, sizeof p, "%s/sub", repo);
    if (mkdir(repo, 0700) != 0 || mkdir(p, 0700) != 0 || mkdir(cache, 0700) != 0) abort();
    put_file("a.py", "def parse(x):\n    return helper(x)\n\n\ndef helper(y):\n    return y\n");
    put_file("sub/b.c", "int main(void) { return 0; }\n");
    put_file("README.md", "# fuzz\n\xc3\xa9t\xc3\xa9\n");
}

static int utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i], need, min, cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) need = 1, min = 0x80, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef) need = 2, min = 0x800, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4) need = 3, min = 0x10000, cp = c & 0x07;
        else return 0;
        if (n - i <= need) return 0;
        for (unsigned k = 1; k <= need; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        i += need + 1;
    }
    return 1;
}

static void check_reply(const char *reply)
{
    json_object *j;
    size_t n;
    if (reply == NULL) return;
    n = strlen(reply);
    FUZZ_CHECK(memchr(reply, '\n', n) == NULL, "a reply spans lines: %.200s", reply);
    FUZZ_CHECK(utf8_valid((const unsigned char *)reply, n), "a reply is not valid UTF-8: %.200s", reply);
    j = json_tokener_parse(reply);
    FUZZ_CHECK(j != NULL, "a reply is not JSON: %.200s", reply);
    json_object_put(j);
}

/* The bare dispatcher's handler: reads params as a server would. */
static int echo(void *ctx, const char *method, json_object *params, bool notification, json_object **result,
                cn_rpc_fault *f)
{
    (void)ctx;
    (void)notification;
    if (strcmp(method, "fail") == 0) return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "asked to fail: %s", method);
    *result = params ? json_object_get(params) : json_object_new_string(method);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *in;
    cn_buf msg = CN_BUF_INIT;
    int mode, rc;
    long no = 0;

    if (size < 1) return 0;
    if (root[0] == '\0') setup();
    mode = data[0] % 3;
    /* a small limit, so that the fuzzer reaches the too-long paths */
    if ((in = fmemopen((void *)(data + 1), size - 1 ? size - 1 : 1, "rb")) == NULL) return 0;
    if (size == 1) (void)getc(in);
    if (mode == 1) {
        cn_lsp_options o = {repo, cache, NULL, true, NULL, NULL};
        cn_lsp *s = NULL;
        bool skipped;
        int status;
        FUZZ_CHECK(cn_lsp_new(&o, &s) == 0, "the LSP server does not start: %s", cn_error_last()->message);
        while ((rc = cn_frame_read_lsp(in, ++no, 4096, &msg, &skipped)) > 0) {
            char *reply = NULL;
            if (skipped) continue;
            if (cn_lsp_handle(s, msg.data ? msg.data : "", msg.len, &reply) < 0) break;
            check_reply(reply);
            free(reply);
            if (cn_lsp_exited(s, &status)) break;
        }
        cn_lsp_free(s);
    } else {
        cn_mcp_options o = {.repo = repo, .cache_dir = cache, .no_compile = true};
        cn_mcp *s = NULL;
        FUZZ_CHECK(mode != 0 || cn_mcp_new(&o, &s) == 0, "the MCP server does not start: %s", cn_error_last()->message);
        while ((rc = cn_frame_read_line(in, 4096, &msg)) > 0) {
            char *reply = NULL;
            if (rc == 2 || msg.len == 0) continue;   /* as `codenib mcp` skips blank lines */
            if (mode == 0) rc = cn_mcp_handle(s, msg.data, msg.len, &reply);
            else rc = cn_rpc_handle(msg.data, msg.len, true, echo, NULL, &reply);
            if (rc < 0) break;
            check_reply(reply);
            free(reply);
        }
        cn_mcp_free(s);
    }
    fclose(in);
    cn_buf_free(&msg);
    return 0;
}
