#ifndef VIEWPORTD_CMICROHTTPD_SHIM_H
#define VIEWPORTD_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <microhttpd.h>

/* Swift does not import C variadic functions; these static inline wrappers
 * expose the few variadic MHD entry points ViewportHTTP needs. */

/** Receives one formatted MHD log line. */
typedef void (*viewport_log_fn)(void *ctx, const char *message);

/** Log sink handed to MHD_OPTION_EXTERNAL_LOGGER; must outlive the daemon. */
struct viewport_logger {
    viewport_log_fn fn;
    void *ctx;
};

/** Per-request context factory (MHD_OPTION_URI_LOG_CALLBACK): its result becomes *con_cls. */
typedef void *(*viewport_uri_fn)(void *cls, const char *uri, struct MHD_Connection *connection);

static inline void viewport_mhd_logger(void *cls, const char *fmt, va_list ap) {
    struct viewport_logger *logger = (struct viewport_logger *)cls;
    char buffer[1024];
    vsnprintf(buffer, sizeof buffer, fmt, ap);
    if (logger != NULL && logger->fn != NULL) {
        logger->fn(logger->ctx, buffer);
    }
}

/** Everything MHD_start_daemon needs, as a plain struct Swift can fill in. */
struct viewport_daemon_options {
    unsigned int flags;
    uint16_t port;                    /* only for MHD's messages: the port is in `address` */
    const struct sockaddr *address;   /* address to bind, port included; used during start only */
    unsigned int thread_pool_size;
    unsigned int connection_timeout;  /* seconds */
    unsigned int connection_limit;
    size_t connection_memory_limit;   /* bytes per connection */
    MHD_AccessHandlerCallback access_handler;
    void *access_handler_cls;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
    viewport_uri_fn uri_callback;
    void *uri_callback_cls;
    struct viewport_logger *logger;
};

static inline struct MHD_Daemon *viewport_mhd_start(const struct viewport_daemon_options *o) {
    return MHD_start_daemon(
        o->flags, o->port, NULL, NULL, o->access_handler, o->access_handler_cls,
        MHD_OPTION_EXTERNAL_LOGGER, viewport_mhd_logger, (void *)o->logger,
        MHD_OPTION_SOCK_ADDR, o->address,
        MHD_OPTION_THREAD_POOL_SIZE, o->thread_pool_size,
        MHD_OPTION_CONNECTION_TIMEOUT, o->connection_timeout,
        MHD_OPTION_CONNECTION_LIMIT, o->connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, o->connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, o->completed, o->completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, o->uri_callback, o->uri_callback_cls,
        MHD_OPTION_END);
}

/** The port the daemon listens on (useful after binding port 0), or 0. */
static inline uint16_t viewport_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/** The socket of a connection, or -1. */
static inline int viewport_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

/** MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE): the application is done with an upgraded
 * socket; MHD closes it and cleans the connection up. Call exactly once per upgrade. */
static inline enum MHD_Result viewport_mhd_upgrade_close(struct MHD_UpgradeResponseHandle *urh) {
    return MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

#endif
