extension ServiceConfiguration {
    /// `viewportd --help`.
    public static let usage = """
        viewportd — view recycling for scroll views, over HTTP

        usage: viewportd [--config PATH] [--KEY VALUE …]

        Settings come from config/viewportd.json (or --config PATH / VIEWPORTD_CONFIG), then
        environment variables, then flags; each overrides the one before.

          key                      environment               flag                        default
          http.host                HTTP_HOST                 --http-host                 0.0.0.0
          http.port                HTTP_PORT                 --http-port                 8080
          http.threads             HTTP_THREADS              --http-threads              2
          http.maxBodyBytes        HTTP_MAX_BODY_BYTES       --http-max-body-bytes       134217728
          http.connectionTimeout   HTTP_CONNECTION_TIMEOUT   --http-connection-timeout   30 (s)
          http.connectionLimit     HTTP_CONNECTION_LIMIT     --http-connection-limit     1024
          http.connectionMemoryLimit HTTP_CONNECTION_MEMORY_LIMIT --http-connection-memory-limit 16384
          http.drainTimeout        HTTP_DRAIN_TIMEOUT        --http-drain-timeout        10 (s)
          http.maxBufferedBodyBytes HTTP_MAX_BUFFERED_BODY_BYTES --http-max-buffered-body-bytes 1073741824
          sessions.max             SESSIONS_MAX              --sessions-max              10000
          sessions.idleTimeout     SESSIONS_IDLE_TIMEOUT     --sessions-idle-timeout     600 (s)
          sessions.maxViews        SESSIONS_MAX_VIEWS        --sessions-max-views        100000
          layouts.max              LAYOUTS_MAX               --layouts-max               1000
          layouts.maxItems         LAYOUTS_MAX_ITEMS         --layouts-max-items         2000000
          layouts.maxTotalItems    LAYOUTS_MAX_TOTAL_ITEMS   --layouts-max-total-items   20000000
          auth.token               AUTH_TOKEN                --auth-token                (none)
          log.level                LOG_LEVEL                 --log-level                 info
          store.url                STORE_URL                 --store-url                 (none: in-process)
          store.flushInterval      STORE_FLUSH_INTERVAL      --store-flush-interval      0.1 (s)
          store.leaseTimeout       STORE_LEASE_TIMEOUT       --store-lease-timeout       2 (s)
          store.timeout            STORE_TIMEOUT             --store-timeout             0.5 (s)
          store.keyPrefix          STORE_KEY_PREFIX          --store-key-prefix          viewportd:

        store.url (redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], Redis or Valkey) shares layouts and
        sessions between instances; see README "Many instances, one store".
        """
}
