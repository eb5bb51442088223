#include "devhub/hstore.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jscan.h"
#include "pkg/util/xalloc.h"

enum {
    ST_GET,
    ST_UPSERT,
    ST_DEL,
    ST_CHANGE,
    ST_LIST,
    ST_COUNT,
    ST_CHANGES,
    ST_META_SET,
    ST_UID_EXISTS,
    ST_HAS_DEPS,
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST__N
};

static const char *const sql_text[ST__N] = {
    [ST_GET] = "SELECT obj FROM objects WHERE key = ?1",
    [ST_UPSERT] = "INSERT INTO objects(key, obj, rv, uid, owners, fg) VALUES(?1, ?2, ?3, ?4, ?5, "
                  "?6) ON CONFLICT(key) DO UPDATE SET obj = excluded.obj, rv = excluded.rv, "
                  "uid = excluded.uid, owners = excluded.owners, fg = excluded.fg",
    [ST_DEL] = "DELETE FROM objects WHERE key = ?1",
    [ST_CHANGE] = "INSERT INTO changes(rv, type, key, obj) VALUES(?1, ?2, ?3, ?4)",
    /* One lower bound (list_lower): with two (key >= prefix AND key > after) SQLite seeks
     * to the first and filters by the second, so every page re-read the collection from its
     * start (O(n^2) over a paged list). */
    [ST_LIST] = "SELECT key, obj FROM objects WHERE key > ?1 AND key < ?2 ORDER BY key",
    [ST_COUNT] = "SELECT count(*) FROM objects WHERE key >= ?1 AND key < ?2",
    [ST_CHANGES] = "SELECT rv, type, key, obj FROM changes WHERE rv > ?1 AND key >= ?2 AND "
                   "key < ?3 ORDER BY rv",
    [ST_UID_EXISTS] = "SELECT 1 FROM objects WHERE uid = ?1 LIMIT 1",
    [ST_HAS_DEPS] = "SELECT 1 FROM objects WHERE owners LIKE ?1 LIMIT 1",
    [ST_META_SET] = "INSERT INTO meta(k, v) VALUES(?1, ?2) "
                    "ON CONFLICT(k) DO UPDATE SET v = excluded.v",
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
};

struct hstore {
    sqlite3 *db;
    sqlite3_stmt *st[ST__N];
    int64_t rv;
    int64_t compacted;
    long keep;
};

static int db_err(struct hstore *s, struct err *e, const char *what)
{
    return err_set(e, -EIO, "storage: %s: %s", what, sqlite3_errmsg(s->db));
}

static sqlite3_stmt *stmt(struct hstore *s, int id)
{
    sqlite3_stmt *st = s->st[id];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

static int exec_simple(struct hstore *s, int id, struct err *e)
{
    sqlite3_stmt *st = stmt(s, id);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_err(s, e, sql_text[id]);
    return 0;
}

static int64_t meta_get(struct hstore *s, const char *k)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT v FROM meta WHERE k = ?1", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int meta_set(struct hstore *s, const char *k, int64_t v, struct err *e)
{
    sqlite3_stmt *st = stmt(s, ST_META_SET);
    sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, v);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : db_err(s, e, "meta");
}

int hstore_open(struct hstore **out, const char *path, long keep, struct err *e)
{
    struct hstore *s = xcalloc(1, sizeof(*s));
    int ret = 0;
    s->keep = keep > 0 ? keep : 10000;
    if (!path)
        path = ":memory:";
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        ret = err_set(e, -EIO, "storage: cannot open %s: %s", path,
                      s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto out;
    }
    sqlite3_busy_timeout(s->db, 5000);
    const char *schema = "PRAGMA journal_mode=WAL;"
                         "PRAGMA synchronous=NORMAL;"
                         "CREATE TABLE IF NOT EXISTS objects(key TEXT PRIMARY KEY, obj TEXT NOT "
                         "NULL, rv INTEGER NOT NULL, uid TEXT NOT NULL DEFAULT '', owners TEXT "
                         "NOT NULL DEFAULT '', fg INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;"
                         "CREATE INDEX IF NOT EXISTS objects_uid ON objects(uid);"
                         "CREATE INDEX IF NOT EXISTS objects_owned ON objects(owners) WHERE "
                         "owners != '';"
                         "CREATE INDEX IF NOT EXISTS objects_fg ON objects(fg) WHERE fg != 0;"
                         "CREATE TABLE IF NOT EXISTS changes(rv INTEGER PRIMARY KEY, type INTEGER "
                         "NOT NULL, key TEXT NOT NULL, obj TEXT NOT NULL);"
                         "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER);";
    char *msg = NULL;
    if (sqlite3_exec(s->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
        ret = err_set(e, -EIO, "storage: cannot create schema in %s: %s", path,
                      msg ? msg : "unknown error");
        sqlite3_free(msg);
        goto out;
    }
    for (int i = 0; i < ST__N; i++) {
        if (sqlite3_prepare_v3(s->db, sql_text[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
                               NULL) != SQLITE_OK) {
            ret = db_err(s, e, sql_text[i]);
            goto out;
        }
    }
    s->rv = meta_get(s, "rv");
    s->compacted = meta_get(s, "compacted");
out:
    if (ret) {
        hstore_close(s);
        s = NULL;
    }
    *out = s;
    return ret;
}

void hstore_close(struct hstore *s)
{
    if (!s)
        return;
    for (int i = 0; i < ST__N; i++)
        sqlite3_finalize(s->st[i]);
    sqlite3_close(s->db);
    free(s);
}

int64_t hstore_rv(const struct hstore *s)
{
    return s->rv;
}

int64_t hstore_compacted_rv(const struct hstore *s)
{
    return s->compacted;
}

const char *hstore_event_name(enum hstore_event ev)
{
    switch (ev) {
    case HSTORE_ADDED:
        return "ADDED";
    case HSTORE_MODIFIED:
        return "MODIFIED";
    default:
        return "DELETED";
    }
}

static json_t *parse_col(sqlite3_stmt *st, int col)
{
    const char *txt = (const char *)sqlite3_column_text(st, col);
    int n = sqlite3_column_bytes(st, col);
    if (!txt)
        return NULL;
    /* jscan_load: the same tree as json_loadb in a third of the time (bench-devhub) */
    return jscan_load(txt, (size_t)n, NULL);
}

int hstore_get(struct hstore *s, const char *key, json_t **out, struct err *e)
{
    sqlite3_stmt *st = stmt(s, ST_GET);
    int ret = -ENOENT;
    *out = NULL;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = parse_col(st, 0);
        ret = *out ? 0 : err_set(e, -EIO, "storage: corrupt object %s", key);
    } else if (rc != SQLITE_DONE) {
        ret = db_err(s, e, "get");
    }
    sqlite3_reset(st);
    return ret;
}

static void set_rv(json_t *obj, int64_t rv)
{
    json_t *md = json_object_get(obj, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        json_object_set_new(obj, "metadata", md);
    }
    char b[32];
    snprintf(b, sizeof(b), "%" PRId64, rv);
    json_object_set_new(md, "resourceVersion", json_string(b));
}

/* " uid1 uid2 " of the object's ownerReferences, "" when it has none. */
static char *owner_uids(json_t *obj)
{
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    size_t i;
    json_t *ref;
    size_t n = 2;
    json_array_foreach(refs, i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        n += u ? strlen(u) + 1 : 0;
    }
    char *out = xmalloc(n + 1);
    size_t len = 0;
    json_array_foreach(refs, i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (!u || !*u)
            continue;
        out[len++] = ' ';
        memcpy(out + len, u, strlen(u));
        len += strlen(u);
    }
    if (len)
        out[len++] = ' ';
    out[len] = '\0';
    return out;
}

/* 1 when the object is being deleted in the foreground (GC must drive it). */
static int foreground(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    if (!json_object_get(md, "deletionTimestamp"))
        return 0;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(md, "finalizers"), i, f)
    {
        const char *v = json_string_value(f);
        if (v && !strcmp(v, "foregroundDeletion"))
            return 1;
    }
    return 0;
}

int hstore_write(struct hstore *s, enum hstore_event ev, const char *key, json_t *obj,
                 int64_t *rv_out, struct err *e)
{
    char *owners = NULL;
    int64_t rv = s->rv + 1;
    char *txt = NULL;
    int ret = exec_simple(s, ST_BEGIN, e);
    if (ret)
        return ret;
    set_rv(obj, rv);
    txt = json_dumps(obj, JSON_COMPACT);
    if (!txt) {
        ret = err_set(e, -EINVAL, "storage: object %s cannot be serialised", key);
        goto out;
    }
    sqlite3_stmt *st = stmt(s, ST_CHANGE);
    sqlite3_bind_int64(st, 1, rv);
    sqlite3_bind_int(st, 2, (int)ev);
    sqlite3_bind_text(st, 3, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, txt, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        ret = db_err(s, e, "append change");
        goto out;
    }
    if (ev == HSTORE_DELETED) {
        st = stmt(s, ST_DEL);
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    } else {
        const char *uid =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
        owners = owner_uids(obj);
        st = stmt(s, ST_UPSERT);
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, txt, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, rv);
        sqlite3_bind_text(st, 4, uid ? uid : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 5, owners, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 6, foreground(obj));
    }
    if (sqlite3_step(st) != SQLITE_DONE) {
        ret = db_err(s, e, "write object");
        goto out;
    }
    ret = meta_set(s, "rv", rv, e);
out:
    for (int i = 0; i < ST__N; i++)
        sqlite3_reset(s->st[i]);
    if (ret) {
        exec_simple(s, ST_ROLLBACK, NULL);
    } else {
        ret = exec_simple(s, ST_COMMIT, e);
        if (ret)
            exec_simple(s, ST_ROLLBACK, NULL);
    }
    free(txt);
    free(owners);
    if (!ret) {
        s->rv = rv;
        if (rv_out)
            *rv_out = rv;
    }
    return ret;
}

/* Upper bound of a prefix range: the prefix with 0xFF appended (keys are UTF-8
 * text, which never contains the byte 0xFF). */
static char *prefix_end(const char *prefix)
{
    return xasprintf("%s\xff", prefix);
}

/* The exclusive lower bound of a list: `after` when it is past the prefix, else the prefix
 * itself (a key is the prefix plus a non-empty name, so every key of the prefix is > it). */
static const char *list_lower(const char *prefix, const char *after)
{
    return after && strcmp(after, prefix) > 0 ? after : prefix;
}

int hstore_list_text(struct hstore *s, const char *prefix, const char *after, store_text_cb cb,
                     void *userdata, struct err *e)
{
    char *end = prefix_end(prefix);
    sqlite3_stmt *st = NULL;
    int ret = 0;
    if (sqlite3_prepare_v2(s->db, sql_text[ST_LIST], -1, &st, NULL) != SQLITE_OK) {
        ret = db_err(s, e, "list");
        goto out;
    }
    sqlite3_bind_text(st, 1, list_lower(prefix, after), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, end, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *txt = (const char *)sqlite3_column_text(st, 1);
        int n = sqlite3_column_bytes(st, 1);
        if (!txt)
            continue;
        ret = cb((const char *)sqlite3_column_text(st, 0), txt, (size_t)n, userdata);
        if (ret)
            goto out;
    }
    if (rc != SQLITE_DONE)
        ret = db_err(s, e, "list");
out:
    sqlite3_finalize(st);
    free(end);
    return ret;
}

/* hstore_list on top of hstore_list_text: each stored text parsed for the callback. */
struct parse_ctx {
    store_obj_cb cb;
    void *ud;
};

static int parse_then(const char *key, const char *txt, size_t n, void *ud)
{
    struct parse_ctx *p = ud;
    /* jscan_load: the same tree as json_loadb in a third of the time (bench-devhub) */
    json_t *obj = jscan_load(txt, n, NULL);
    if (!obj)
        return 0; /* a stored text that does not parse is skipped */
    int ret = p->cb(key, obj, p->ud);
    json_decref(obj);
    return ret;
}

int hstore_list(struct hstore *s, const char *prefix, const char *after, store_obj_cb cb,
                void *userdata, struct err *e)
{
    struct parse_ctx p = {.cb = cb, .ud = userdata};
    return hstore_list_text(s, prefix, after, parse_then, &p, e);
}

/* Run a fresh statement that selects (key, obj) and feed the callback. */
static int query_objects(struct hstore *s, const char *sql, const char *arg, store_obj_cb cb,
                         void *userdata, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int ret = 0, rc;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_err(s, e, "query");
    if (arg)
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *obj = parse_col(st, 1);
        if (!obj)
            continue;
        ret = cb((const char *)sqlite3_column_text(st, 0), obj, userdata);
        json_decref(obj);
        if (ret)
            break;
    }
    if (!ret && rc != SQLITE_DONE)
        ret = db_err(s, e, "query");
    sqlite3_finalize(st);
    return ret;
}

int hstore_list_owned(struct hstore *s, store_obj_cb cb, void *userdata, struct err *e)
{
    return query_objects(s, "SELECT key, obj FROM objects WHERE owners != '' ORDER BY key", NULL,
                         cb, userdata, e);
}

int hstore_list_foreground(struct hstore *s, store_obj_cb cb, void *userdata, struct err *e)
{
    return query_objects(s, "SELECT key, obj FROM objects WHERE fg != 0 ORDER BY key", NULL, cb,
                         userdata, e);
}

int hstore_list_dependents(struct hstore *s, const char *uid, store_obj_cb cb, void *userdata,
                           struct err *e)
{
    char *pat = xasprintf("%% %s %%", uid);
    int ret = query_objects(s, "SELECT key, obj FROM objects WHERE owners LIKE ?1 ORDER BY key",
                            pat, cb, userdata, e);
    free(pat);
    return ret;
}

static bool exists(struct hstore *s, int id, const char *arg)
{
    sqlite3_stmt *st = stmt(s, id);
    sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    bool found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_reset(st);
    return found;
}

bool hstore_uid_exists(struct hstore *s, const char *uid)
{
    return uid && *uid && exists(s, ST_UID_EXISTS, uid);
}

bool hstore_has_dependents(struct hstore *s, const char *uid)
{
    if (!uid || !*uid)
        return false;
    char *pat = xasprintf("%% %s %%", uid);
    bool found = exists(s, ST_HAS_DEPS, pat);
    free(pat);
    return found;
}

long hstore_count(struct hstore *s, const char *prefix)
{
    char *end = prefix_end(prefix);
    sqlite3_stmt *st = stmt(s, ST_COUNT);
    long n = 0;
    sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, end, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = (long)sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    free(end);
    return n;
}

int hstore_changes(struct hstore *s, int64_t from, const char *prefix, store_change_cb cb,
                   void *userdata, struct err *e)
{
    if (from < s->compacted)
        return err_set(e, -ERANGE, "too old resource version: %" PRId64 " (%" PRId64 ")", from,
                       s->compacted + 1);
    char *end = prefix_end(prefix);
    sqlite3_stmt *st = NULL;
    int ret = 0;
    if (sqlite3_prepare_v2(s->db, sql_text[ST_CHANGES], -1, &st, NULL) != SQLITE_OK) {
        ret = db_err(s, e, "changes");
        goto out;
    }
    sqlite3_bind_int64(st, 1, from);
    sqlite3_bind_text(st, 2, prefix, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, end, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *obj = parse_col(st, 3);
        if (!obj)
            continue;
        int type = sqlite3_column_int(st, 1);
        ret = cb(sqlite3_column_int64(st, 0), (enum hstore_event)type,
                 (const char *)sqlite3_column_text(st, 2), obj, userdata);
        json_decref(obj);
        if (ret)
            goto out;
    }
    if (rc != SQLITE_DONE)
        ret = db_err(s, e, "changes");
out:
    sqlite3_finalize(st);
    free(end);
    return ret;
}

long hstore_compact_to(struct hstore *s, int64_t upto, struct err *e)
{
    if (upto <= s->compacted)
        return 0;
    if (upto > s->rv)
        upto = s->rv;
    int ret = exec_simple(s, ST_BEGIN, e);
    if (ret)
        return ret;
    sqlite3_stmt *st = NULL;
    long n = 0;
    if (sqlite3_prepare_v2(s->db, "DELETE FROM changes WHERE rv <= ?1", -1, &st, NULL) !=
        SQLITE_OK) {
        ret = db_err(s, e, "compact");
        goto out;
    }
    sqlite3_bind_int64(st, 1, upto);
    if (sqlite3_step(st) != SQLITE_DONE) {
        ret = db_err(s, e, "compact");
        goto out;
    }
    n = sqlite3_changes(s->db);
    ret = meta_set(s, "compacted", upto, e);
out:
    sqlite3_finalize(st);
    if (ret) {
        exec_simple(s, ST_ROLLBACK, NULL);
        return ret;
    }
    ret = exec_simple(s, ST_COMMIT, e);
    if (ret) {
        exec_simple(s, ST_ROLLBACK, NULL);
        return ret;
    }
    s->compacted = upto;
    return n;
}

long hstore_compact(struct hstore *s, struct err *e)
{
    if (s->rv - s->compacted <= s->keep)
        return 0;
    return hstore_compact_to(s, s->rv - s->keep, e);
}
