/*
 * kueue-ks-devhub: a small Kubernetes API server for development and
 * end-to-end tests (see devhub/hub.h for what it serves). Not a production
 * API server.
 */
#include <dirent.h>
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devhub/faults.h"
#include "devhub/hub.h"
#include "devhub/nodes.h"
#include "devhub/server.h"
#include "devhub/sim_flags.h"
#include "devhub/tlsgen.h"
#include "pkg/util/b64.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"
#include "pkg/util/xalloc.h"
#include "pkg/yaml/yaml2json.h"
#include "pkg/json/jsonx.h"

#define MAX_MULTI 64

struct opts {
    const char *listen;
    const char *name;
    const char *kubeconfig_out;
    const char *data;
    const char *crds[MAX_MULTI];
    int ncrds;
    const char *nodes[MAX_MULTI];
    int nnodes;
    const char *token;
    const char *log_format;
    int verbosity;
    long compact_keep;
    double bookmark_interval;
    const char *fail_rate;
    const char *fail_codes;
    const char *latency_ms;
    const char *cut_watches;
    bool paused;
    bool fault_seed_set;
    unsigned long long fault_seed;
};

struct app {
    struct ev_loop *loop;
    struct logger lg;
    struct hub *hub;
    struct srv *srv;
    ev_signal sigterm, sigint;
};

static void usage(FILE *out)
{
    fprintf(out,
            "kueue-ks-devhub %s: a small Kubernetes API server for development and end-to-end\n"
            "tests of kueue-ks. It is a development tool, NOT a production API server: no\n"
            "authorization, no admission, no controllers besides garbage collection.\n\n"
            "Usage: kueue-ks-devhub --listen 127.0.0.1:PORT --name NAME --kubeconfig-out FILE\n"
            "                       [--data FILE.db] [--crds DIR]... [--nodes SPEC]...\n"
            "                       [--token T] [--log-format text|json] [--v N]\n\n"
            "  --listen ADDR:PORT     loopback address to serve HTTPS on (PORT 0 = any free port)\n"
            "  --name NAME            cluster/context name written into the kubeconfig\n"
            "  --kubeconfig-out FILE  where to write a kubeconfig (CA, admin client cert, token)\n"
            "  --data FILE.db         SQLite database kept across restarts (default: in memory);\n"
            "                         the CA and certificates are kept in FILE.db.tls/\n"
            "  --crds DIR             load every *.yaml/*.yml/*.json CRD file in DIR at start\n"
            "  --nodes SPEC           create Ready Node objects <name>-node-<i>, e.g.\n"
            "                         2xcpu=8,memory=32Gi,nvidia.com/gpu=1;labels=instance=h100\n"
            "                         ;taints=gpu=true:NoSchedule (see devhub/nodes.h)\n"
            "  --token T              also accept 'Authorization: Bearer T'\n"
            "  --compact-keep N       changes kept for watches (default 10000); older RVs get 410\n"
            "  --bookmark-interval S  seconds between watch BOOKMARK events (default 15)\n"
            "  --fail-rate F          fault injection: fail this fraction (0..1) of writes\n"
            "  --fail-codes LIST      codes injected failures use (default 409,429,500)\n"
            "  --latency-ms N         fault injection: delay every API response\n"
            "  --cut-watches-every S  fault injection: close watch streams after S seconds\n"
            "  --paused               start paused (API requests wait until resumed)\n"
            "  --fault-seed N         seed of the injected failures' random choices (default:\n"
            "                         from the time and pid); replays a failure sequence\n"
            "                         Faults change at run time: GET/PUT /devhub/faults with\n"
            "                         {writeFailRate, failCodes, latencyMs, cutWatchesEverySec,\n"
            "                         paused, retryAfterSeconds}\n"
            "  --log-format F         text (default) or json\n"
            "  --v N                  verbosity (3 logs every request)\n",
            KKS_VERSION);
    simflags_usage(out); /* sim: simulator flags (devhub/sim_flags.h) */
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"name", required_argument, NULL, 'n'},
        {"kubeconfig-out", required_argument, NULL, 'k'},
        {"data", required_argument, NULL, 'd'},
        {"crds", required_argument, NULL, 'c'},
        {"nodes", required_argument, NULL, 'N'},
        {"token", required_argument, NULL, 't'},
        {"log-format", required_argument, NULL, 'f'},
        {"v", required_argument, NULL, 'v'},
        {"compact-keep", required_argument, NULL, 'K'},
        {"bookmark-interval", required_argument, NULL, 'b'},
        {"fail-rate", required_argument, NULL, 'R'},
        {"fail-codes", required_argument, NULL, 'C'},
        {"latency-ms", required_argument, NULL, 'L'},
        {"cut-watches-every", required_argument, NULL, 'W'},
        {"paused", no_argument, NULL, 'P'},
        {"fault-seed", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    char *end;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'l':
            o->listen = optarg;
            break;
        case 'n':
            o->name = optarg;
            break;
        case 'k':
            o->kubeconfig_out = optarg;
            break;
        case 'd':
            o->data = optarg;
            break;
        case 'c':
            if (o->ncrds == MAX_MULTI)
                return -E2BIG;
            o->crds[o->ncrds++] = optarg;
            break;
        case 'N':
            if (o->nnodes == MAX_MULTI)
                return -E2BIG;
            o->nodes[o->nnodes++] = optarg;
            break;
        case 't':
            o->token = optarg;
            break;
        case 'f':
            o->log_format = optarg;
            break;
        case 'v':
            o->verbosity = (int)strtol(optarg, &end, 10);
            if (*end)
                return -EINVAL;
            break;
        case 'K':
            o->compact_keep = strtol(optarg, &end, 10);
            if (*end || o->compact_keep <= 0)
                return -EINVAL;
            break;
        case 'b':
            o->bookmark_interval = strtod(optarg, &end);
            if (*end || o->bookmark_interval <= 0)
                return -EINVAL;
            break;
        case 'R':
            o->fail_rate = optarg;
            break;
        case 'C':
            o->fail_codes = optarg;
            break;
        case 'L':
            o->latency_ms = optarg;
            break;
        case 'W':
            o->cut_watches = optarg;
            break;
        case 'P':
            o->paused = true;
            break;
        case 'S':
            errno = 0;
            o->fault_seed = strtoull(optarg, &end, 10);
            if (*end || !*optarg || errno || optarg[0] == '-')
                return -EINVAL;
            o->fault_seed_set = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -EINVAL;
        }
    }
    if (optind < argc)
        return -EINVAL;
    return 0;
}

static int write_kubeconfig(const char *path, const char *name, int port,
                            const struct tls_bundle *tls, const char *token, struct err *e)
{
    char *ca = b64_encode(tls->ca_cert, strlen(tls->ca_cert)),
         *cc = b64_encode(tls->client_cert, strlen(tls->client_cert)),
         *ck = b64_encode(tls->client_key, strlen(tls->client_key));
    struct buf b;
    int ret = 0;
    buf_init(&b, 1 << 20);
    buf_printf(&b,
               "apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n  cluster:\n"
               "    server: https://127.0.0.1:%d\n    certificate-authority-data: %s\n"
               "users:\n- name: %s-admin\n  user:\n    client-certificate-data: %s\n"
               "    client-key-data: %s\n",
               name, port, ca, name, cc, ck);
    if (token)
        buf_printf(&b, "- name: %s-token\n  user:\n    token: \"%s\"\n", name, token);
    buf_printf(&b, "contexts:\n- name: %s\n  context:\n    cluster: %s\n    user: %s-admin\n", name,
               name, name);
    if (token)
        buf_printf(&b, "- name: %s-token\n  context:\n    cluster: %s\n    user: %s-token\n", name,
                   name, name);
    buf_printf(&b, "current-context: %s\n", name);
    char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        ret = err_set(e, -errno, "cannot write kubeconfig %s: %s", tmp, strerror(errno));
        goto out;
    }
    size_t off = 0;
    while (off < b.len) {
        ssize_t w = write(fd, b.data + off, b.len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            ret = err_set(e, -errno, "cannot write kubeconfig %s: %s", tmp, strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    if (close(fd) && !ret)
        ret = err_set(e, -errno, "cannot write kubeconfig %s: %s", tmp, strerror(errno));
    if (!ret && rename(tmp, path))
        ret = err_set(e, -errno, "cannot rename kubeconfig to %s: %s", path, strerror(errno));
    if (ret)
        unlink(tmp);
out:
    free(tmp);
    free(ca);
    free(cc);
    free(ck);
    buf_free(&b);
    return ret;
}

static int read_file(const char *path, struct buf *b, struct err *e)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return err_set(e, -errno, "cannot read %s: %s", path, strerror(errno));
    char chunk[65536];
    size_t n;
    int ret = 0;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (buf_append(b, chunk, n)) {
            ret = err_set(e, -E2BIG, "%s is too large", path);
            break;
        }
    }
    fclose(f);
    return ret;
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* Load every CRD (and any other object) from the YAML/JSON files of dir. */
static int load_dir(struct hub *hub, const char *dir, const struct logger *lg, struct err *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return err_set(e, -errno, "--crds %s: %s", dir, strerror(errno));
    struct dirent *de;
    int ret = 0, count = 0;
    while (!ret && (de = readdir(d))) {
        const char *n = de->d_name;
        if (n[0] == '.' ||
            !(has_suffix(n, ".yaml") || has_suffix(n, ".yml") || has_suffix(n, ".json")))
            continue;
        char *path = xasprintf("%s/%s", dir, n);
        struct buf b;
        buf_init(&b, 64u << 20);
        json_t *docs = NULL;
        ret = read_file(path, &b, e);
        if (!ret) {
            docs = yaml_to_json_all(b.data ? b.data : "", b.len, NULL, e);
            if (!docs)
                ret = err_prefix(e, "%s", path);
        }
        size_t i;
        json_t *doc;
        json_array_foreach(docs, i, doc)
        {
            if (ret)
                break;
            if (!json_is_object(doc))
                continue;
            ret = hub_apply_object(hub, doc, e);
            if (ret)
                err_prefix(e, "%s", path);
            else
                count++;
        }
        json_decref(docs);
        buf_free(&b);
        free(path);
    }
    closedir(d);
    if (!ret)
        log_info(lg, "loaded objects", "dir", dir, "count", LOG_INT(count));
    return ret;
}

/* Flags -> fault settings, through the same validation as the admin endpoint. */
static int fault_flags(const struct opts *o, struct faults *f, struct err *e)
{
    json_t *j = json_object();
    int ret = 0;
    char *end = NULL;
    if (o->fail_rate) {
        double v = strtod(o->fail_rate, &end);
        if (*end) {
            ret = err_set(e, -EINVAL, "--fail-rate must be a number between 0 and 1");
            goto out;
        }
        json_object_set_new(j, "writeFailRate", json_real(v));
    }
    if (o->latency_ms) {
        long v = strtol(o->latency_ms, &end, 10);
        if (*end) {
            ret = err_set(e, -EINVAL, "--latency-ms must be an integer");
            goto out;
        }
        json_object_set_new(j, "latencyMs", json_integer(v));
    }
    if (o->cut_watches) {
        long v = strtol(o->cut_watches, &end, 10);
        if (*end) {
            ret = err_set(e, -EINVAL, "--cut-watches-every must be an integer (seconds)");
            goto out;
        }
        json_object_set_new(j, "cutWatchesEverySec", json_integer(v));
    }
    if (o->paused)
        json_object_set_new(j, "paused", json_true());
    ret = faults_update_json(f, j, e);
    if (!ret && o->fail_codes)
        ret = faults_parse_codes(f, o->fail_codes, e);
out:
    json_decref(j);
    return ret;
}

/* --nodes: Ready Node objects named <name>-node-<i>, numbered across all specs. */
static int add_nodes(struct hub *hub, const struct opts *o, struct err *e)
{
    unsigned next = 1;
    char now[40];
    clock_now_rfc3339(now, sizeof(now), 0);
    for (int i = 0; i < o->nnodes; i++) {
        struct nodes_spec spec;
        int rc = nodes_parse(o->nodes[i], &spec, e);
        if (rc) {
            err_prefix(e, "--nodes");
            return rc < 0 ? rc : -EINVAL;
        }
        json_t *arr = json_array();
        next = nodes_build(&spec, o->name, next, now, arr);
        nodes_spec_release(&spec);
        size_t k;
        json_t *node;
        int ret = 0;
        json_array_foreach(arr, k, node)
        {
            ret = hub_apply_object(hub, node, e);
            if (ret)
                break;
        }
        json_decref(arr);
        if (ret) {
            err_prefix(e, "--nodes");
            return ret < 0 ? ret : -EINVAL;
        }
    }
    return 0;
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct app *app = w->data;
    (void)revents;
    log_info(&app->lg, "shutting down", "signal", LOG_INT(w->signum));
    ev_break(loop, EVBREAK_ALL);
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    struct opts o = {.listen = "127.0.0.1:0", .name = "devhub"};
    struct app app = {0};
    struct tls_bundle tls = {0};
    struct err e = {0};
    int rc = 1;
    /* sim: simulator flags (devhub/sim_flags.h) are taken out of argv first. */
    struct simflags sf;
    struct simflags_run *sims = NULL;
    if (simflags_extract(&argc, argv, &sf, &e)) {
        fprintf(stderr, "kueue-ks-devhub: %s\n", e.msg);
        return 2;
    }
    if (parse_args(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    enum log_format fmt = LOG_FMT_TEXT;
    if (o.log_format && log_parse_format(o.log_format, &fmt)) {
        fprintf(stderr, "kueue-ks-devhub: --log-format must be text or json\n");
        return 2;
    }
    log_init(&app.lg, stderr, o.verbosity, fmt);
    app.lg.component = "devhub";
    if (!o.kubeconfig_out) {
        fprintf(stderr, "kueue-ks-devhub: --kubeconfig-out is required\n");
        usage(stderr);
        return 2;
    }
    char host[64];
    const char *colon = strrchr(o.listen, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || *end || port < 0 || port > 65535 || (size_t)(colon - o.listen) >= sizeof(host)) {
        fprintf(stderr, "kueue-ks-devhub: --listen must be ADDRESS:PORT, e.g. 127.0.0.1:6443\n");
        return 2;
    }
    snprintf(host, sizeof(host), "%.*s", (int)(colon - o.listen), o.listen);
    struct faults faults;
    faults_init(&faults);
    if (fault_flags(&o, &faults, &e)) {
        fprintf(stderr, "kueue-ks-devhub: %s\n", e.msg);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    app.loop = ev_default_loop(0);
    struct hub_opts ho = {.loop = app.loop,
                          .lg = &app.lg,
                          .data_path = o.data,
                          .compact_keep = o.compact_keep,
                          .bookmark_interval = o.bookmark_interval};
    if (hub_new(&app.hub, &ho, &e))
        goto fail;
    for (int i = 0; i < o.ncrds; i++)
        if (load_dir(app.hub, o.crds[i], &app.lg, &e))
            goto fail;
    if (add_nodes(app.hub, &o, &e))
        goto fail;
    if (simflags_start(&sims, &sf, app.loop, app.hub, &app.lg, &e)) /* sim */
        goto fail;
    if (o.data) {
        /* Kept next to the database: a kubeconfig written before a restart keeps working. */
        char *dir = xasprintf("%s.tls", o.data);
        bool created = false;
        int trc = tlsgen_persist(&tls, dir, o.name, 3650, &created, &e);
        if (!trc)
            log_info(&app.lg, created ? "TLS material created" : "TLS material loaded", "dir", dir);
        free(dir);
        if (trc)
            goto fail;
    } else if (tlsgen_bundle(&tls, o.name, 3650, &e)) {
        goto fail;
    }
    struct srv_opts so = {.loop = app.loop,
                          .hub = app.hub,
                          .lg = &app.lg,
                          .host = host,
                          .port = (int)port,
                          .cert_pem = tls.server_cert,
                          .key_pem = tls.server_key,
                          .ca_pem = tls.ca_cert,
                          .token = o.token,
                          .faults = &faults,
                          .seed = o.fault_seed_set ? o.fault_seed
                                                   : (unsigned long long)getpid() ^
                                                         (unsigned long long)time(NULL)};
    if (srv_start(&app.srv, &so, &e))
        goto fail;
    srv_faults_changed(app.srv);
    if (write_kubeconfig(o.kubeconfig_out, o.name, srv_port(app.srv), &tls, o.token, &e))
        goto fail;
    log_info(&app.lg, "serving", "name", o.name, "address", host, "port",
             LOG_INT(srv_port(app.srv)), "kubeconfig", o.kubeconfig_out, "data",
             o.data ? o.data : ":memory:");
    ev_signal_init(&app.sigterm, on_signal, SIGTERM);
    ev_signal_init(&app.sigint, on_signal, SIGINT);
    app.sigterm.data = app.sigint.data = &app;
    ev_signal_start(app.loop, &app.sigterm);
    ev_signal_start(app.loop, &app.sigint);
    ev_run(app.loop, 0);
    rc = 0;
    goto out;
fail:
    log_error(&app.lg, "devhub failed", "error", e.msg);
out:
    srv_stop(app.srv);
    simflags_stop(sims); /* sim */
    hub_free(app.hub);
    tlsgen_free(&tls);
    if (app.loop) {
        ev_signal_stop(app.loop, &app.sigterm);
        ev_signal_stop(app.loop, &app.sigint);
    }
    if (!rc)
        log_info(&app.lg, "stopped");
    return rc;
}
