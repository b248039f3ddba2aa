/* The bare libmicrohttpd server scripts/load.sh measures viewportd against: the same MHD flags and
 * options as ViewportHTTP (epoll thread pool, ITC, suspend/resume, upgrade, the same connection
 * timeout, limit and memory, a URI callback and a completion callback), answering every request
 * with the same bytes (a plan captured from viewportd) after reading its body, as viewportd does.
 * Nothing else: no routing, no parsing, no allocation per request. What viewportd spends above it
 * is ours.
 *
 *   cc -O2 -o mhd-reference scripts/mhd-reference.c -lmicrohttpd
 *   mhd-reference PORT THREADS MEMORY_LIMIT TIMEOUT BODY_FILE CONTENT_TYPE [WORK_NS]
 *
 * WORK_NS (default 0): CPU work done per request before answering, in nanoseconds (a busy loop
 * calibrated at start): a control for load tests, a bare server that costs what viewportd costs a
 * request, to tell what a latency tail owes to CPU per request alone (scripts/load.sh --mhd-work).
 *
 * Prints "listening on http://127.0.0.1:PORT" once it serves; stops on SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *body;
static size_t body_size;
static const char *content_type;
static volatile sig_atomic_t stop;
/* Busy-loop iterations per request (WORK_NS times the calibrated rate). */
static unsigned long work_iterations;
static volatile unsigned long work_sink;

static void spin(unsigned long iterations) {
    unsigned long x = work_sink;
    for (unsigned long i = 0; i < iterations; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    work_sink = x;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Loop iterations per nanosecond on this thread, best of five 20 ms samples (before any load). */
static double spin_rate(void) {
    double best = 0;
    for (int k = 0; k < 5; k++) {
        unsigned long n = 1UL << 20;
        double start = now_seconds();
        spin(n);
        double elapsed = now_seconds() - start;
        while (elapsed < 0.02) {
            n *= 2;
            start = now_seconds();
            spin(n);
            elapsed = now_seconds() - start;
        }
        double rate = (double)n / (elapsed * 1e9);
        if (rate > best) best = rate;
    }
    return best;
}

/* Marks a request whose head was seen (con_cls): no allocation per request. */
static char started_marker, head_marker;

static void *uri_started(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls; (void)uri; (void)connection;
    return &started_marker;
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
    (void)cls; (void)connection; (void)toe;
    *con_cls = NULL;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url,
                                      const char *method, const char *version, const char *upload_data,
                                      size_t *upload_data_size, void **con_cls) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    if (*con_cls != &head_marker) { /* first call: the head is complete */
        *con_cls = &head_marker;
        return MHD_YES;
    }
    if (*upload_data_size > 0) { /* a body chunk: read and dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (work_iterations > 0) spin(work_iterations);
    struct MHD_Response *response = MHD_create_response_from_buffer(body_size, body, MHD_RESPMEM_PERSISTENT);
    if (response == NULL) return MHD_NO;
    MHD_add_response_header(response, "Content-Type", content_type);
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: %s PORT THREADS MEMORY_LIMIT TIMEOUT BODY_FILE CONTENT_TYPE [WORK_NS]\n", argv[0]);
        return 2;
    }
    unsigned port = (unsigned)atoi(argv[1]);
    unsigned threads = (unsigned)atoi(argv[2]);
    size_t memory = (size_t)atol(argv[3]);
    unsigned timeout = (unsigned)atoi(argv[4]);
    content_type = argv[6];
    if (argc == 8 && atol(argv[7]) > 0) {
        double rate = spin_rate();
        work_iterations = (unsigned long)((double)atol(argv[7]) * rate);
        fprintf(stderr, "work: %ld ns a request, %lu iterations (%.3f per ns)\n", atol(argv[7]), work_iterations, rate);
    }
    FILE *f = fopen(argv[5], "rb");
    if (f == NULL) { perror(argv[5]); return 1; }
    fseek(f, 0, SEEK_END);
    body_size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    body = malloc(body_size + 1);
    if (body == NULL || fread(body, 1, body_size, f) != body_size) { fprintf(stderr, "cannot read %s\n", argv[5]); return 1; }
    fclose(f);

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* ViewportHTTP's flags (HTTPServer.start) and options (CMicroHTTPD/shim.h). */
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME
        | MHD_ALLOW_UPGRADE;
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, access_handler, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_CONNECTION_LIMIT, 1024u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_URI_LOG_CALLBACK, uri_started, NULL,
        MHD_OPTION_END);
    if (daemon == NULL) { fprintf(stderr, "cannot start on port %u\n", port); return 1; }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("listening on http://127.0.0.1:%u\n", port);
    fflush(stdout);
    while (!stop) pause();
    MHD_stop_daemon(daemon);
    free(body);
    return 0;
}
