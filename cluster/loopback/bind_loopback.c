/* bind_loopback.so: LD_PRELOAD'ed into every Ray process the embedded launcher starts.
 *
 * WHY: Ray 2.60 has no option to choose the address its servers listen on. The C++ GrpcServer
 * of gcs_server, raylet and every core worker binds "0.0.0.0:port", and the dashboard and
 * runtime-env agents bind the machine's own IP, whatever --node-ip-address says. Anyone who
 * reaches one of those ports can run code in the cluster. The embedded stack is one machine,
 * so nothing of Ray has any reason to be reachable from elsewhere: this interposer rewrites
 * every bind(2) to a non-loopback address (INADDR_ANY included) into a bind to loopback.
 * The port is always kept; loopback and AF_UNIX binds are left alone. (A client socket bound to
 * a public address before connect() would break: nothing in a one-machine stack does that.)
 * One exception, QUATRO_BIND_PUBLIC_PORT: the launcher runs under this interposer too (its Ray
 * driver listens like any worker), and its gateway may be meant to listen on HOST:PORT.
 * Built per run by cluster/loopback/__init__.py with `cc -shared -fPIC -O2 ... -ldl`.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

/* The port left alone (host order), 0 for none; read once, before any thread runs. */
static unsigned short public_port;

__attribute__((constructor)) static void read_public_port(void) {
    const char *port = getenv("QUATRO_BIND_PUBLIC_PORT");
    long value = port ? strtol(port, NULL, 10) : 0;
    public_port = (value > 0 && value < 65536) ? (unsigned short)value : 0;
}

static unsigned short port_of(const struct sockaddr *addr) {
    /* sin_port and sin6_port sit at the same offset, right after the family. */
    return ntohs(((const struct sockaddr_in *)addr)->sin_port);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    static bind_fn real_bind;
    if (!real_bind) real_bind = (bind_fn)dlsym(RTLD_NEXT, "bind");
    if (addr && public_port && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6) &&
        len >= (socklen_t)sizeof(struct sockaddr_in) && port_of(addr) == public_port)
        return real_bind(fd, addr, len);
    if (addr && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        struct sockaddr_in v4;
        memcpy(&v4, addr, sizeof v4);
        if ((ntohl(v4.sin_addr.s_addr) >> 24) != 127) { /* not 127.0.0.0/8 */
            v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            return real_bind(fd, (const struct sockaddr *)&v4, sizeof v4);
        }
    } else if (addr && addr->sa_family == AF_INET6 &&
               len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 v6;
        memcpy(&v6, addr, sizeof v6);
        int v4_loopback = IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr) && v6.sin6_addr.s6_addr[12] == 127;
        if (!IN6_IS_ADDR_LOOPBACK(&v6.sin6_addr) && !v4_loopback) {
            /* "::" on a dual-stack socket serves IPv4 too: keep it dual-stack but bind the
             * v4-mapped loopback, so IPv4 clients of 127.0.0.1 still reach it. A v6-only
             * socket cannot take a v4-mapped address: it gets ::1. */
            int v6only = 0;
            socklen_t optlen = sizeof v6only;
            if (getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &optlen) != 0) v6only = 1;
            memset(&v6.sin6_addr, 0, sizeof v6.sin6_addr);
            if (v6only) {
                v6.sin6_addr = in6addr_loopback;
            } else {
                v6.sin6_addr.s6_addr[10] = 0xff;
                v6.sin6_addr.s6_addr[11] = 0xff;
                v6.sin6_addr.s6_addr[12] = 127;
                v6.sin6_addr.s6_addr[15] = 1;
            }
            v6.sin6_scope_id = 0;
            return real_bind(fd, (const struct sockaddr *)&v6, sizeof v6);
        }
    }
    return real_bind(fd, addr, len);
}
