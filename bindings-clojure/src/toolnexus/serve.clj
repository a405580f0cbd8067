(ns toolnexus.serve
  "The Clojure port's `serve`, MCP profile only: a toolkit's tools exposed as an MCP server
  over streamable HTTP (libtoolnexus's `tn_mcp_serve`). A2A serving is not in the C ABI yet."
  (:require [toolnexus.impl.error :as error]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool]))

(defn- refuse [message]
  (throw (error/ex {:kind "invalid_argument" :code (ffi/status :invalid_argument) :message message})))

(defn serve
  "Serves `tk` over MCP: `(serve tk {:host :port :mcp {:name :version :tools :token
  :allowed-origins}})`. `:host`/`:port` default to the engine's (a free loopback port); the
  engine refuses an address off loopback without a `:token`, and without `:tools` leaves the
  command and file built-ins out. Returns `{:url :tools :warnings :stop!}`; `:url` is the MCP
  endpoint. `(stop! handle)` (or `((:stop! handle))`) stops it. Without :mcp, the `mcpServer`
  block of the toolkit's config is served (a toolkit without one is refused). :a2a and
  :on-call are not in the C ABI yet: set, they are refused."
  [tk {:keys [host port mcp a2a on-call]}]
  (when (some? a2a) (refuse "serve option :a2a (A2A serving) is not supported by this binding yet"))
  (when (some? on-call) (refuse "serve option :on-call is not supported by this binding yet"))
  (let [h (tool/native tk)
        options (when mcp
                  (cond-> (select-keys mcp [:name :version :token])
                    (some? (:tools mcp)) (assoc :tools (mapv #(if (keyword? %) (name %) (str %)) (:tools mcp)))
                    (some? (:allowed-origins mcp)) (assoc :allowed_origins (vec (:allowed-origins mcp)))))
        addr (when (or host port) (str (or host "127.0.0.1") ":" (or port 0)))
        p (try (ffi/call-handle "tn_mcp_serve" (ffi/ptr h)
                                (when options (ffi/c-string (json/write-str options)))
                                (when addr (ffi/c-string addr)))
               (finally (ffi/keep-alive h)))
        server (ffi/handle "tn_mcp_server_free" p)
        info (json/read-str (ffi/call-string "tn_mcp_server_info" p))
        stopped (atom false)
        stop! (fn [] (when (compare-and-set! stopped false true) (ffi/free-handle! "tn_mcp_server_free" p)) nil)]
    {:url (:url info) :tools (:tools info) :warnings (mapv :message (:warnings info))
     :stop! stop! ::server server}))

(defn stop!
  "Stops a server `serve` returned (idempotent)."
  [handle]
  ((:stop! handle)))
