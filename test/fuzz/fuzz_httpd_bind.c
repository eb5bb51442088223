/*
 * Fuzz target for httpd_parse_bind (the --metrics-bind-address /
 * --health-probe-bind-address flag values): never crashes, and an accepted
 * address re-formats to one that parses to the same host and port.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/httpd/httpd.h"
#include "pkg/util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = xstrndup((const char *)data, size);
    char *host = NULL;
    int port = -1;
    bool disabled = false;
    struct err e = {0};
    int rc = httpd_parse_bind(s, &host, &port, &disabled, &e);
    if (rc == 0 && !disabled) {
        if (!host || port < 0 || port > 65535)
            abort();
        char *again =
            strchr(host, ':') ? xasprintf("[%s]:%d", host, port) : xasprintf("%s:%d", host, port);
        char *host2 = NULL;
        int port2 = -1;
        bool dis2 = true;
        if (httpd_parse_bind(again, &host2, &port2, &dis2, &e) != 0 || dis2 ||
            strcmp(host, host2) != 0 || port != port2)
            abort();
        free(host2);
        free(again);
    } else if (rc == 0) {
        if (host)
            abort();
    } else if (host || !e.msg[0]) {
        abort();
    }
    free(host);
    free(s);
    return 0;
}
