/*
 * fakesrv: scripted HTTP(S) test server on libmicrohttpd (thread per
 * connection, so per-response delays and held streams just sleep).
 */
#include "test/support/fakesrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

struct chunk {
    double delay_s;
    char *data;
    size_t len;
};

struct script {
    struct script *next;
    int refs; /* queue + active streams; under the server lock */
    char *method, *path, *qc, *ql;
    int status;
    char **headers;
    char *body;
    size_t body_len;
    struct chunk *chunks;
    size_t n_chunks;
    double delay_s;
    enum fakesrv_end end;
    int times;
};

struct fakesrv {
    struct MHD_Daemon *d;
    char url[64];
    char *cert_pem;
    char *key_pem;
    bool client_certs;
    char *client_cert_pem;
    char *client_key_pem;
    pthread_mutex_t mu;
    struct script *head;
    struct fakesrv_req **reqs;
    size_t nreq, capreq;
    size_t conns;
    size_t unmatched;
    bool released;
    bool stopping;
};

/* Per-request state (MHD's con_cls). */
struct reqstate {
    struct fakesrv *s;
    char *uri; /* raw URI with query */
    bool seen;
    struct buf body;
};

/* A streamed response being sent. */
struct stream {
    struct fakesrv *s;
    struct script *sc;
    size_t i;   /* current chunk */
    size_t off; /* offset in it */
    bool delayed;
};

static void die(const char *what)
{
    fprintf(stderr, "fakesrv: %s\n", what);
    abort();
}

static bool flag(struct fakesrv *s, bool *f)
{
    pthread_mutex_lock(&s->mu);
    bool v = *f;
    pthread_mutex_unlock(&s->mu);
    return v;
}

/* Sleep up to `secs`, waking early when the server stops. */
static void nap(struct fakesrv *s, double secs)
{
    double end = clock_mono_s() + secs;
    while (!flag(s, &s->stopping)) {
        double left = end - clock_mono_s();
        if (left <= 0)
            break;
        if (left > 0.01)
            left = 0.01;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static char **dup_strv(const char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    char **out = xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = xstrdup(v[i]);
    return out;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static char *dup_opt(const char *p)
{
    return p ? xstrdup(p) : NULL;
}

static void script_unref(struct script *sc)
{
    /* Called with the server lock held. */
    if (--sc->refs > 0)
        return;
    free(sc->method);
    free(sc->path);
    free(sc->qc);
    free(sc->ql);
    free_strv(sc->headers);
    free(sc->body);
    for (size_t i = 0; i < sc->n_chunks; i++)
        free(sc->chunks[i].data);
    free(sc->chunks);
    free(sc);
}

void fakesrv_push(struct fakesrv *s, const struct fakesrv_resp *r)
{
    struct script *sc = xcalloc(1, sizeof *sc);
    sc->refs = 1;
    sc->method = dup_opt(r->method);
    sc->path = dup_opt(r->path);
    sc->qc = dup_opt(r->query_contains);
    sc->ql = dup_opt(r->query_lacks);
    sc->status = r->status ? r->status : 200;
    sc->headers = dup_strv(r->headers);
    if (r->body) {
        sc->body_len = strlen(r->body);
        sc->body = xstrdup(r->body);
    }
    if (r->n_chunks) {
        sc->chunks = xcalloc(r->n_chunks, sizeof *sc->chunks);
        for (size_t i = 0; i < r->n_chunks; i++) {
            size_t len = r->chunks[i].len ? r->chunks[i].len : strlen(r->chunks[i].data);
            sc->chunks[i].delay_s = r->chunks[i].delay_s;
            sc->chunks[i].len = len;
            sc->chunks[i].data = xmalloc(len + 1);
            memcpy(sc->chunks[i].data, r->chunks[i].data, len);
            sc->chunks[i].data[len] = '\0';
        }
        sc->n_chunks = r->n_chunks;
    }
    sc->delay_s = r->delay_s;
    sc->end = r->end;
    sc->times = r->times == 0 ? 1 : r->times;
    pthread_mutex_lock(&s->mu);
    struct script **pp = &s->head;
    while (*pp)
        pp = &(*pp)->next;
    *pp = sc;
    pthread_mutex_unlock(&s->mu);
}

void fakesrv_push_json(struct fakesrv *s, const char *method, const char *path,
                       const char *query_lacks, int status, const char *body)
{
    struct fakesrv_resp r = {
        .method = method,
        .path = path,
        .query_lacks = query_lacks,
        .status = status,
        .body = body,
    };
    fakesrv_push(s, &r);
}

void fakesrv_push_status(struct fakesrv *s, const char *method, const char *path, int status,
                         const char *reason, const char *message)
{
    /* Escape quotes and backslashes in the message for the JSON body. */
    struct buf m;
    buf_init(&m, 1 << 20);
    for (const char *p = message ? message : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_append(&m, "\\", 1);
        buf_append(&m, p, 1);
    }
    char *body = xasprintf("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                           "\"status\":\"Failure\",\"message\":\"%s\",\"reason\":\"%s\","
                           "\"code\":%d}",
                           buf_str(&m), reason ? reason : "", status);
    buf_free(&m);
    fakesrv_push_json(s, method, path, NULL, status, body);
    free(body);
}

void fakesrv_push_watch(struct fakesrv *s, const char *path, const char *const *events,
                        enum fakesrv_end end)
{
    size_t n = 0;
    while (events && events[n])
        n++;
    struct fakesrv_chunk *ch = xcalloc(n ? n : 1, sizeof *ch);
    char **lines = xcalloc(n ? n : 1, sizeof *lines);
    for (size_t i = 0; i < n; i++) {
        lines[i] = xasprintf("%s\n", events[i]);
        ch[i].data = lines[i];
    }
    struct fakesrv_resp r = {
        .method = "GET",
        .path = path,
        .query_contains = "watch=",
        .chunks = ch,
        .n_chunks = n,
        .end = end,
    };
    fakesrv_push(s, &r);
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    free(ch);
}

char *fakesrv_watch_error_line(int code)
{
    const char *reason = code == 410 ? "Expired" : code == 500 ? "InternalError" : "BadRequest";
    const char *msg = code == 410 ? "too old resource version: 1 (5000)" : "injected error";
    return xasprintf("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                     "\"metadata\":{},\"status\":\"Failure\",\"message\":\"%s\",\"reason\":\"%s\","
                     "\"code\":%d}}",
                     msg, reason, code);
}

void fakesrv_release(struct fakesrv *s)
{
    pthread_mutex_lock(&s->mu);
    s->released = true;
    pthread_mutex_unlock(&s->mu);
}

void fakesrv_clear(struct fakesrv *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->head) {
        struct script *sc = s->head;
        s->head = sc->next;
        script_unref(sc);
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---- request recording ---------------------------------------------------- */

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    struct buf *b = cls;
    char *lk = xstrdup(key);
    for (char *p = lk; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    buf_printf(b, "%s: %s", lk, value ? value : "");
    buf_append(b, "", 1); /* NUL separator */
    free(lk);
    return MHD_YES;
}

/* The CN of the connection's client certificate when it verifies against our trust, else NULL. */
static char *client_cn(struct MHD_Connection *con)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return NULL;
    gnutls_session_t sess = (gnutls_session_t)ci->tls_session;
    unsigned int status = 0, n = 0;
    if (gnutls_certificate_verify_peers2(sess, &status) != GNUTLS_E_SUCCESS || status != 0)
        return NULL;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(sess, &n);
    if (!peers || n == 0)
        return NULL;
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) != GNUTLS_E_SUCCESS)
        return NULL;
    char cn[256];
    size_t len = sizeof cn;
    char *out = NULL;
    if (gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) == GNUTLS_E_SUCCESS &&
        gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &len) ==
            GNUTLS_E_SUCCESS)
        out = xstrndup(cn, len);
    gnutls_x509_crt_deinit(crt);
    return out;
}

static struct fakesrv_req *record(struct fakesrv *s, struct MHD_Connection *con, const char *method,
                                  const char *url, struct reqstate *st)
{
    struct fakesrv_req *r = xcalloc(1, sizeof *r);
    r->method = xstrdup(method);
    r->path = xstrdup(url);
    const char *q = st->uri ? strchr(st->uri, '?') : NULL;
    r->query = xstrdup(q ? q + 1 : "");
    struct buf hb;
    buf_init(&hb, 1 << 20);
    MHD_get_connection_values(con, MHD_HEADER_KIND, collect_header, &hb);
    size_t n = 0;
    for (size_t i = 0; i < hb.len; i++)
        if (hb.data[i] == '\0')
            n++;
    r->headers = xcalloc(n + 1, sizeof *r->headers);
    size_t k = 0;
    for (size_t i = 0; i < hb.len; i += strlen(hb.data + i) + 1)
        r->headers[k++] = xstrdup(hb.data + i);
    buf_free(&hb);
    r->body_len = st->body.len;
    r->body = xmalloc(st->body.len + 1);
    if (st->body.len)
        memcpy(r->body, st->body.data, st->body.len);
    r->body[st->body.len] = '\0';
    r->t = clock_mono_s();
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->conn_id = ci ? (unsigned long)(uintptr_t)ci->socket_context : 0;
    if (s->client_certs)
        r->client_cn = client_cn(con);
    return r;
}

static struct fakesrv_req *req_copy(const struct fakesrv_req *r)
{
    struct fakesrv_req *c = xcalloc(1, sizeof *c);
    c->method = xstrdup(r->method);
    c->path = xstrdup(r->path);
    c->query = xstrdup(r->query);
    c->headers = dup_strv((const char *const *)r->headers);
    c->body = xmalloc(r->body_len + 1);
    memcpy(c->body, r->body, r->body_len + 1);
    c->body_len = r->body_len;
    c->t = r->t;
    c->conn_id = r->conn_id;
    c->client_cn = r->client_cn ? xstrdup(r->client_cn) : NULL;
    return c;
}

void fakesrv_req_free(struct fakesrv_req *r)
{
    if (!r)
        return;
    free(r->method);
    free(r->path);
    free(r->query);
    free_strv(r->headers);
    free(r->body);
    free(r->client_cn);
    free(r);
}

const char *fakesrv_req_header(const struct fakesrv_req *r, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; r->headers && r->headers[i]; i++) {
        const char *h = r->headers[i];
        if (!strncasecmp(h, name, n) && h[n] == ':')
            return h[n + 1] == ' ' ? h + n + 2 : h + n + 1;
    }
    return NULL;
}

size_t fakesrv_nreq(struct fakesrv *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->nreq;
    pthread_mutex_unlock(&s->mu);
    return n;
}

struct fakesrv_req *fakesrv_req_get(struct fakesrv *s, size_t i)
{
    struct fakesrv_req *r = NULL;
    pthread_mutex_lock(&s->mu);
    if (i < s->nreq)
        r = req_copy(s->reqs[i]);
    pthread_mutex_unlock(&s->mu);
    return r;
}

size_t fakesrv_connections(struct fakesrv *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->conns;
    pthread_mutex_unlock(&s->mu);
    return n;
}

size_t fakesrv_unmatched(struct fakesrv *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->unmatched;
    pthread_mutex_unlock(&s->mu);
    return n;
}

size_t fakesrv_queued(struct fakesrv *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = 0;
    for (struct script *sc = s->head; sc; sc = sc->next)
        n++;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* ---- MHD callbacks --------------------------------------------------------- */

static bool matches(const struct script *sc, const char *method, const char *path,
                    const char *query)
{
    if (sc->method && strcmp(sc->method, method) != 0)
        return false;
    if (sc->path && strncmp(sc->path, path, strlen(sc->path)) != 0)
        return false;
    if (sc->qc && !strstr(query, sc->qc))
        return false;
    if (sc->ql && strstr(query, sc->ql))
        return false;
    return true;
}

/* Take the first matching script (a reference for the caller), or NULL. Lock held. */
static struct script *take(struct fakesrv *s, const char *method, const char *path,
                           const char *query)
{
    for (struct script **pp = &s->head; *pp; pp = &(*pp)->next) {
        struct script *sc = *pp;
        if (!matches(sc, method, path, query))
            continue;
        if (sc->times > 0 && --sc->times == 0) {
            *pp = sc->next; /* the queue's reference passes to the caller */
            sc->next = NULL;
        } else {
            sc->refs++;
        }
        return sc;
    }
    return NULL;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *out, size_t max)
{
    struct stream *st = cls;
    struct script *sc = st->sc;
    while (st->i < sc->n_chunks) {
        struct chunk *ch = &sc->chunks[st->i];
        if (!st->delayed) {
            st->delayed = true;
            if (ch->delay_s > 0)
                nap(st->s, ch->delay_s);
        }
        if (flag(st->s, &st->s->stopping))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (st->off < ch->len) {
            size_t n = ch->len - st->off;
            if (n > max)
                n = max;
            memcpy(out, ch->data + st->off, n);
            st->off += n;
            return (ssize_t)n;
        }
        st->i++;
        st->off = 0;
        st->delayed = false;
    }
    switch (sc->end) {
    case FAKESRV_DROP:
        return MHD_CONTENT_READER_END_WITH_ERROR;
    case FAKESRV_HOLD:
        while (!flag(st->s, &st->s->stopping) && !flag(st->s, &st->s->released))
            nap(st->s, 0.01);
        return flag(st->s, &st->s->stopping) ? MHD_CONTENT_READER_END_WITH_ERROR
                                             : MHD_CONTENT_READER_END_OF_STREAM;
    case FAKESRV_FINISH:
    default:
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
}

static void stream_free(void *cls)
{
    struct stream *st = cls;
    pthread_mutex_lock(&st->s->mu);
    script_unref(st->sc);
    pthread_mutex_unlock(&st->s->mu);
    free(st);
}

static enum MHD_Result add_headers(struct MHD_Response *resp, const struct script *sc)
{
    bool ct = false;
    for (size_t i = 0; sc->headers && sc->headers[i]; i++) {
        const char *h = sc->headers[i];
        const char *colon = strchr(h, ':');
        if (!colon)
            continue;
        char *name = xstrndup(h, (size_t)(colon - h));
        const char *v = colon + 1;
        while (*v == ' ')
            v++;
        if (!strcasecmp(name, "Content-Type"))
            ct = true;
        MHD_add_response_header(resp, name, v);
        free(name);
    }
    if (!ct)
        MHD_add_response_header(resp, "Content-Type", "application/json");
    return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    struct fakesrv *s = cls;
    struct reqstate *st = *con_cls;
    if (!st) { /* no URI log callback ran (should not happen) */
        st = xcalloc(1, sizeof *st);
        st->s = s;
        buf_init(&st->body, 64 << 20);
        *con_cls = st;
    }
    if (!st->seen) {
        st->seen = true;
        return MHD_YES;
    }
    if (*upload_size) {
        buf_append(&st->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }

    struct fakesrv_req *r = record(s, con, method, url, st);
    pthread_mutex_lock(&s->mu);
    if (s->nreq == s->capreq) {
        s->capreq = s->capreq ? s->capreq * 2 : 16;
        s->reqs = xrealloc(s->reqs, s->capreq * sizeof *s->reqs);
    }
    s->reqs[s->nreq++] = r;
    struct script *sc = take(s, method, url, r->query);
    if (!sc)
        s->unmatched++;
    pthread_mutex_unlock(&s->mu);

    struct MHD_Response *resp;
    enum MHD_Result ret;
    if (!sc) {
        char *body = xasprintf("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                               "\"status\":\"Failure\",\"message\":\"fakesrv: no scripted "
                               "response for %s %s\",\"reason\":\"NotFound\",\"code\":404}",
                               method, url);
        resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
        MHD_add_response_header(resp, "Content-Type", "application/json");
        ret = MHD_queue_response(con, 404, resp);
        MHD_destroy_response(resp);
        return ret;
    }
    if (sc->delay_s > 0)
        nap(s, sc->delay_s);
    int status = sc->status;
    if (sc->n_chunks || sc->end != FAKESRV_FINISH) {
        struct stream *stv = xcalloc(1, sizeof *stv);
        stv->s = s;
        stv->sc = sc; /* takes the reference */
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_reader, stv,
                                                 stream_free);
    } else {
        resp = MHD_create_response_from_buffer(sc->body_len, sc->body ? sc->body : (char *)"",
                                               MHD_RESPMEM_MUST_COPY);
    }
    add_headers(resp, sc);
    if (!(sc->n_chunks || sc->end != FAKESRV_FINISH)) {
        pthread_mutex_lock(&s->mu);
        script_unref(sc);
        pthread_mutex_unlock(&s->mu);
    }
    ret = MHD_queue_response(con, (unsigned int)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *con)
{
    struct reqstate *st = xcalloc(1, sizeof *st);
    st->s = cls;
    st->uri = xstrdup(uri);
    buf_init(&st->body, 64 << 20);
    return st;
}

static void completed(void *cls, struct MHD_Connection *con, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct reqstate *st = *con_cls;
    if (!st)
        return;
    free(st->uri);
    buf_free(&st->body);
    free(st);
    *con_cls = NULL;
}

static void notify_conn(void *cls, struct MHD_Connection *con, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    struct fakesrv *s = cls;
    if (toe != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    pthread_mutex_lock(&s->mu);
    s->conns++;
    *socket_context = (void *)(uintptr_t)s->conns;
    pthread_mutex_unlock(&s->mu);
}

/* ---- TLS material ---------------------------------------------------------- */

static char *bio_string(BIO *b)
{
    char *p = NULL;
    long n = BIO_get_mem_data(b, &p);
    char *out = xmalloc((size_t)n + 1);
    memcpy(out, p, (size_t)n);
    out[n] = '\0';
    return out;
}

static void add_exts(X509 *x, X509 *issuer, const char *const (*exts)[2], size_t n)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    for (size_t i = 0; i < n; i++) {
        X509_EXTENSION *ext = X509V3_EXT_conf(NULL, &ctx, exts[i][0], exts[i][1]);
        if (!ext)
            die("cannot build a certificate extension");
        X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
    }
}

/* A new certificate for `pkey` named `cn`, issued by `issuer` (NULL = self); signed later. */
static X509 *new_cert(EVP_PKEY *pkey, const char *cn, X509 *issuer, long serial)
{
    X509 *x = X509_new();
    if (!x)
        die("cannot allocate a certificate");
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, pkey);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    return x;
}

static void pem_pair(X509 *x, EVP_PKEY *pkey, char **cert, char **key)
{
    BIO *cb = BIO_new(BIO_s_mem());
    BIO *kb = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(cb, x);
    PEM_write_bio_PrivateKey(kb, pkey, NULL, NULL, 0, NULL, NULL);
    *cert = bio_string(cb);
    *key = bio_string(kb);
    BIO_free(cb);
    BIO_free(kb);
}

/*
 * A self-signed EC P-256 server certificate for 127.0.0.1 / localhost, valid
 * one day, that also acts as the CA; with client_certs, a client certificate
 * signed by it.
 */
static void make_certs(struct fakesrv *s)
{
    long serial = (long)(clock_mono_ns() & 0x7fffffff);
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    if (!pkey)
        die("cannot generate a TLS key");
    X509 *x = new_cert(pkey, "fakesrv", NULL, serial);
    static const char *const srv_exts[][2] = {
        {"basicConstraints", "critical,CA:TRUE"},
        {"keyUsage", "critical,digitalSignature,keyCertSign"},
        {"subjectAltName", "IP:127.0.0.1,DNS:localhost"},
        {"subjectKeyIdentifier", "hash"},
    };
    add_exts(x, x, srv_exts, sizeof srv_exts / sizeof srv_exts[0]);
    if (!X509_sign(x, pkey, EVP_sha256()))
        die("cannot sign the certificate");
    pem_pair(x, pkey, &s->cert_pem, &s->key_pem);
    if (s->client_certs) {
        EVP_PKEY *ckey = EVP_EC_gen("P-256");
        if (!ckey)
            die("cannot generate a TLS key");
        X509 *cx = new_cert(ckey, "fakesrv-client", x, serial + 1);
        static const char *const cli_exts[][2] = {
            {"basicConstraints", "critical,CA:FALSE"},
            {"keyUsage", "critical,digitalSignature"},
            {"extendedKeyUsage", "clientAuth"},
        };
        add_exts(cx, x, cli_exts, sizeof cli_exts / sizeof cli_exts[0]);
        if (!X509_sign(cx, pkey, EVP_sha256()))
            die("cannot sign the client certificate");
        pem_pair(cx, ckey, &s->client_cert_pem, &s->client_key_pem);
        X509_free(cx);
        EVP_PKEY_free(ckey);
    }
    X509_free(x);
    EVP_PKEY_free(pkey);
}

/* ---- lifecycle ------------------------------------------------------------- */

struct fakesrv *fakesrv_start(const struct fakesrv_opts *opts)
{
    struct fakesrv *s = xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    bool tls = opts && opts->tls;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = 0;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* No MHD_USE_ERROR_LOG: dropped streams and refused TLS handshakes are what tests
       provoke, and libmicrohttpd would print each of them. */
    unsigned int flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
    if (tls) {
        s->client_certs = opts->client_certs;
        make_certs(s);
        flags |= MHD_USE_TLS;
        /* With a trust list libmicrohttpd asks for (but does not require) client certificates. */
        s->d = MHD_start_daemon(
            flags, 0, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
            MHD_OPTION_URI_LOG_CALLBACK, uri_log, s, MHD_OPTION_NOTIFY_COMPLETED, completed, s,
            MHD_OPTION_NOTIFY_CONNECTION, notify_conn, s, MHD_OPTION_HTTPS_MEM_KEY, s->key_pem,
            MHD_OPTION_HTTPS_MEM_CERT, s->cert_pem,
            s->client_certs ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, s->cert_pem,
            MHD_OPTION_END);
    } else {
        s->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR,
                                (struct sockaddr *)&sa, MHD_OPTION_URI_LOG_CALLBACK, uri_log, s,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, s,
                                MHD_OPTION_NOTIFY_CONNECTION, notify_conn, s, MHD_OPTION_END);
    }
    if (!s->d)
        die("cannot start libmicrohttpd on 127.0.0.1");
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    if (!di || !di->port)
        die("cannot read the bound port");
    snprintf(s->url, sizeof s->url, "%s://127.0.0.1:%u", tls ? "https" : "http",
             (unsigned)di->port);
    return s;
}

void fakesrv_stop(struct fakesrv *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_mutex_unlock(&s->mu);
    MHD_stop_daemon(s->d);
    fakesrv_clear(s);
    for (size_t i = 0; i < s->nreq; i++)
        fakesrv_req_free(s->reqs[i]);
    free(s->reqs);
    free(s->cert_pem);
    free(s->client_cert_pem);
    if (s->key_pem) {
        explicit_bzero(s->key_pem, strlen(s->key_pem));
        free(s->key_pem);
    }
    if (s->client_key_pem) {
        explicit_bzero(s->client_key_pem, strlen(s->client_key_pem));
        free(s->client_key_pem);
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
}

const char *fakesrv_url(const struct fakesrv *s)
{
    return s->url;
}

const char *fakesrv_ca_pem(const struct fakesrv *s)
{
    return s->cert_pem;
}

const char *fakesrv_client_cert_pem(const struct fakesrv *s)
{
    return s->client_cert_pem;
}

const char *fakesrv_client_key_pem(const struct fakesrv *s)
{
    return s->client_key_pem;
}
