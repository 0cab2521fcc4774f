/* Helpers of the parameter-server tests: free loopback ports and TF_CONFIG clusters on 127.0.0.1. */
#ifndef PS_TEST_UTIL_H
#define PS_TEST_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tfc_test.h"

/* A port on 127.0.0.1 that was free a moment ago (the kernel's choice for port 0). */
static int ps_free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* '"127.0.0.1:p1","127.0.0.1:p2"' for n fresh ports (stored in ports). */
static void ps_addr_list(char *buf, size_t size, int n, int *ports) {
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        ports[i] = ps_free_port();
        size_t at = strlen(buf);
        snprintf(buf + at, size - at, "%s\"127.0.0.1:%d\"", i ? "," : "", ports[i]);
    }
}

#endif
