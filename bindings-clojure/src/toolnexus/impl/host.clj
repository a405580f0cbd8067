(ns ^:no-doc toolnexus.impl.host
  "The host side of libtoolnexus' callbacks: Clojure tools, :wait-for, :http-client, :hooks
  and :on-error behind the C function pointers of include/toolnexus.h.

  Lifetimes: the callback objects are created once (defonce) and never collected, so the
  library can never call a freed trampoline. What differs per client or toolkit travels as
  `user_data`: a number keyed into `registry`, removed by the library's own finalizer
  (`free_user_data`) once nothing uses it any more.

  Threads: a callback runs on a library thread and must return promptly, so it only decodes
  its string argument and hands the Clojure function to `executor` (daemon threads, so a
  finished script exits); the answer goes back through tn_complete from there."
  (:require [clojure.string :as str]
            [toolnexus.impl.convert :as convert]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.json :as json])
  (:import (com.sun.jna CallbackReference CallbackThreadInitializer Memory Native Pointer)
           (java.util.concurrent ConcurrentHashMap ExecutorService Executors ThreadFactory)
           (java.util.concurrent.atomic AtomicLong)))

(gen-interface
 :name toolnexus.impl.host.HostCallback
 :extends [com.sun.jna.Callback]
 :methods [[invoke [com.sun.jna.Pointer com.sun.jna.Pointer long] void]])

(gen-interface
 :name toolnexus.impl.host.HookCallback
 :extends [com.sun.jna.Callback]
 :methods [[invoke [com.sun.jna.Pointer com.sun.jna.Pointer com.sun.jna.Pointer long] void]])

(gen-interface
 :name toolnexus.impl.host.FreeCallback
 :extends [com.sun.jna.Callback]
 :methods [[invoke [com.sun.jna.Pointer] void]])

(gen-interface
 :name toolnexus.impl.host.MetricCallback
 :extends [com.sun.jna.Callback]
 :methods [[invoke [com.sun.jna.Pointer com.sun.jna.Pointer] void]])

(import '(toolnexus.impl.host HostCallback HookCallback FreeCallback MetricCallback))

;; ---------------------------------------------------------------------------------------------
;; user_data registry and the host thread pool

(defonce ^:private ^ConcurrentHashMap registry (ConcurrentHashMap.))
(defonce ^:private ^AtomicLong ids (AtomicLong.))

(defn register!
  "Keeps `entry` (the host functions of one client or toolkit) until the library's finalizer
  releases it; returns the `user_data` pointer naming it."
  ^Pointer [entry]
  (let [id (.incrementAndGet ids)]
    (.put registry id entry)
    (Pointer. id)))

(defn unregister!
  "Drops an entry (idempotent; the library's finalizer normally does it)."
  [^Pointer user-data]
  (.remove registry (Pointer/nativeValue user-data)))

(defn- entry-of [^Pointer user-data]
  (when user-data (.get registry (Pointer/nativeValue user-data))))

(defonce ^:private ^ExecutorService executor
  (let [n (AtomicLong.)]
    (Executors/newCachedThreadPool
     (reify ThreadFactory
       (newThread [_ r]
         (doto (Thread. ^Runnable r (str "toolnexus-host-" (.incrementAndGet n)))
           (.setDaemon true)))))))

;; ---------------------------------------------------------------------------------------------
;; host exceptions that end a run

;; An exception from :wait-for, a hook, :http-client or :on-error ends the run. It waits here
;; under a number that travels with the failure (tn_complete_host_error) into the run's error
;; JSON as "host_ref", and `run` takes it back to rethrow it as the cause.
(defonce ^:private ^ConcurrentHashMap thrown (ConcurrentHashMap.))

(defn message
  "An exception's message as a tool error or log line shows it."
  ^String [^Throwable e]
  (or (ex-message e) (str e)))

(defn- ending-failure
  "The completion `[status message host-ref]` for a host exception that ends the run."
  [^Throwable e]
  (let [id (.incrementAndGet ids)]
    (.put thrown id e)
    [(ffi/status :host) (message e) id]))

(defn take-thrown
  "The host exception kept under `host-ref` (removing it), or nil."
  [host-ref]
  (when (integer? host-ref)
    (.remove thrown (long host-ref))))

;; ---------------------------------------------------------------------------------------------
;; direct calls made with a ctx

;; `toolnexus.tool/execute` with a ctx runs the tool's 2-arity even when the ctx holds no
;; answer (as the Clojure port's `(if ctx (f args ctx) (f args))`), but the engine's call JSON
;; says only whether there is an answer. So such a call travels under a call id of its own,
;; registered here with the caller's call id, and `call-tool` reads "a ctx was given" from it.
(defonce ^:private ^ConcurrentHashMap direct-calls (ConcurrentHashMap.))

(defn direct-call!
  "Registers a direct call made with a ctx whose call id is `call-id`; returns the call id to
  send to the engine instead. Release it with `forget-direct-call!`."
  ^String [call-id]
  (let [k (str "toolnexus-direct-call-" (.incrementAndGet ids) "-" (java.util.UUID/randomUUID))]
    (.put direct-calls k (str call-id))
    k))

(defn forget-direct-call!
  "Drops a call id made by `direct-call!` (idempotent)."
  [^String k]
  (.remove direct-calls k))

;; ---------------------------------------------------------------------------------------------
;; the handlers: Clojure data in, [status payload] out, run on the executor

(defn- call-tool
  "Runs Clojure tool `t` for the engine's call `{:name :args :call_id :answer? :timeout_ms?}`:
  `(execute args ctx)` when there is a ctx (the engine re-runs the tool with an answer, or
  `toolnexus.tool/execute` was given a ctx), else `(execute args)`, as the Clojure port calls
  `(f args ctx)` whenever a ctx is given. In a run the first execution has no ctx, even though
  the engine tells it the call id and the time left. A tool with only a 1-arity that gets a
  ctx throws an ArityException, which becomes an error result like any other. Returns
  `[status payload]`: a thrown exception, or a result carrying an error part
  (`toolnexus.content`), becomes an error status with its message, which the engine feeds
  back to the model as an error result."
  [t call]
  (try
    (let [f (:execute t)
          {:keys [args answer call_id timeout_ms]} call
          direct-id (when (string? call_id) (.get direct-calls call_id))
          r (if (or (some? answer) (some? direct-id))
              (f args (cond-> {:call-id (or direct-id call_id)}
                        (some? answer) (assoc :answer answer)
                        timeout_ms (assoc :timeout-ms timeout_ms)))
              (f args))
          bad-part (when (map? r) (first (filter #(= "error" (:type %)) (:parts r))))]
      (cond
        bad-part
        [(ffi/status :host) (:error bad-part)]

        (map? r)
        [ffi/ok (json/write-str (convert/tool-result->wire r))]

        :else
        [(ffi/status :host) (str "tool " (:name call) " returned " (if (nil? r) "nil" (.getName (class r)))
                           ", not a ToolResult (use toolnexus.tool/success or failure)")]))
    (catch Throwable e
      [(ffi/status :host) (message e)])))

(defn- on-tool
  "Runs the tool the engine names by its host_ref: its index in the toolkit's `:tools`."
  [entry ^String call-json]
  (let [call (json/read-str call-json)
        ref (:host_ref call)]
    (if-let [t (when (integer? ref) (get (:tools entry) ref))]
      (call-tool t call)
      [(ffi/status :host) (str "unknown tool: " (:name call))])))

(defn- on-wait-for [entry ^String request-json]
  (try
    (let [answer ((:wait-for entry) (json/read-str request-json))]
      [ffi/ok (if (nil? answer) "null" (json/write-str answer))])
    (catch Throwable e (ending-failure e))))

(defn- engine-answer
  "An in-process model's answer with the engine's key names: the port writes `:tool-calls`
  and `:usage` `{:prompt-tokens ...}` in kebab-case."
  [answer]
  (let [snake (fn [m] (into {} (map (fn [[k v]] [(convert/engine-option-name k) v])) m))]
    (cond-> (if (map? answer) (snake answer) answer)
      (map? (:usage answer)) (assoc "usage" (snake (:usage answer))))))

(defn- on-generate [entry ^String request-json]
  (try
    (let [answer ((:generate entry) (json/read-str request-json))]
      [ffi/ok (json/write-str (engine-answer answer))])
    (catch Throwable e (ending-failure e))))

(defn- on-toolkit-wait-for
  "A toolkit's :wait-for, asked about an MCP server's elicitation. Its exception goes back to
  the server in the engine's words, so it completes as a plain error status."
  [entry ^String request-json]
  (try
    (let [answer ((:wait-for entry) (json/read-str request-json))]
      [ffi/ok (if (nil? answer) "null" (json/write-str answer))])
    (catch Throwable e [(ffi/status :host) (message e)])))

(defn- on-skill-provider
  "A toolkit's :skill-provider, called while the toolkit is built: its skill defs, or its
  exception as an error status (the engine makes it a warning)."
  [entry ^String _request-json]
  (try
    (let [defs ((:skill-provider entry))]
      [ffi/ok (json/write-str (if (nil? defs) [] defs))])
    (catch Throwable e [(ffi/status :host) (message e)])))

(defn- header-map [m]
  (into {} (map (fn [[k v]] [(if (keyword? k) (name k) (str k)) (str v)])) m))

(defn- on-transport [entry ^String request-json]
  (try
    (let [req (json/read-str-raw request-json)
          res ((:http-client entry) (get req "url") (get req "headers") (get req "body"))]
      (cond
        (not (map? res))
        (ending-failure (ex-info (str ":http-client returned " (if (nil? res) "nil" (.getName (class res)))
                                      ", not {:status :headers :body}")
                                 {:kind :host}))

        ;; No HTTP answer (a connection error, a timeout): the engine retries it.
        (nil? (:status res))
        [(ffi/status :network) (str (or (:error res) "the :http-client got no HTTP answer"))]

        :else
        (let [body (:body res)]
          [ffi/ok (json/write-str {:status (:status res)
                                   :headers (header-map (:headers res))
                                   :body (cond (nil? body) ""
                                               (string? body) body
                                               :else (json/write-str body))})])))
    (catch Throwable e (ending-failure e))))

(defn- hook-key
  "The Clojure key of an engine hook name: `before_llm` -> `:before-llm`."
  [engine-name]
  (keyword (str/replace engine-name "_" "-")))

(defonce ^:private hooks-table
  ;; {:before-llm {:name "before_llm" :bit 1} ...}: the engine's hooks and their TN_HOOK_* bits
  (delay (into {} (map (juxt (comp hook-key :name) identity)) (ffi/engine-table "tn_hook_bits"))))

(defn hook-keys
  "The `:hooks` keys the engine has a hook for."
  []
  (set (keys @hooks-table)))

(defn hook-mask
  "The TN_HOOK_* bits for a `:hooks` map."
  [hooks]
  (reduce (fn [m [k f]] (if-let [h (when f (get @hooks-table k))] (bit-or m (:bit h)) m)) 0 hooks))

(defn- hook-answer
  "What a hook returned, as the engine's override JSON: its override fields, a `:result` in
  the engine's ToolResult shape. Which of them a hook may use is the engine's to decide."
  [r]
  (when (map? r)
    (not-empty (cond-> (select-keys r [:messages :tools :model :args])
                 (some? (:result r)) (assoc :result (convert/tool-result->wire (:result r)))))))

(defn- on-hook [entry ^String hook ^String event-json]
  (try
    (let [f (get-in entry [:hooks (hook-key hook)])
          event (json/read-str event-json)
          event (cond-> event (contains? event :result) (update :result convert/wire->tool-result))
          answer (when f (hook-answer (f event)))]
      [ffi/ok (if answer (json/write-str answer) "null")])
    (catch Throwable e (ending-failure e))))

(defn- on-error [entry ^String info-json]
  (try
    (let [info (json/read-str info-json)
          verdict ((:on-error entry) (-> info
                                         (dissoc :retryable)
                                         (assoc :retryable? (boolean (:retryable info)))))]
      [ffi/ok (if (contains? #{:retry "retry"} verdict) "\"retry\"" "\"fail\"")])
    (catch Throwable e (ending-failure e))))

(defn- on-store
  "A host store's `get` (`{:id}`: the transcript, or null) or `save` (`{:id :messages}`),
  through the store map's `:get` and `:save`. What they throw fails the run, with the
  exception as the cause."
  [entry ^String op ^String request-json]
  (try
    (let [{:keys [id messages]} (json/read-str request-json)]
      (case op
        "get" (let [m ((:get entry) id)]
                [ffi/ok (if (nil? m) "null" (json/write-str (vec m)))])
        "save" (do ((:save entry) id messages)
                   [ffi/ok "null"])))
    (catch Throwable e (ending-failure e))))

;; ---------------------------------------------------------------------------------------------
;; the callbacks

(defn- complete!
  "Completes `token` with a handler's `[status payload]`, or `[status message host-ref]` for a
  host exception; one the run no longer awaits is dropped."
  [token [status payload host-ref]]
  (if host-ref
    (when-not (ffi/complete-host-error! token payload host-ref)
      (take-thrown host-ref))
    (ffi/complete! token status payload)))

(defn- dispatch
  "Runs `(handler entry)` on the executor and completes `token` with its `[status payload]`."
  [^Pointer user-data ^long token handler]
  (let [entry (entry-of user-data)]
    (if (nil? entry)
      (complete! token [(ffi/status :internal) "toolnexus: a callback arrived for a released client or toolkit"])
      (.execute executor
                ^Runnable (fn []
                            (complete! token (try (handler entry)
                                                  (catch Throwable e [(ffi/status :internal) (message e)]))))))))

(defn- guarded
  "Never lets an exception reach JNA's callback dispatch (it would be printed and dropped,
  leaving the engine waiting on the token forever)."
  [^long token f]
  (try (f)
       (catch Throwable e
         (try (complete! token [(ffi/status :internal) (message e)]) (catch Throwable _ nil)))))

(defmacro ^:private host-callback [handler]
  `(reify HostCallback
     (invoke [_ user-data# arg# token#]
       (let [token# (long token#)]
         (guarded token#
                  (fn []
                    (let [s# (ffi/read-string-at arg#)]
                      (dispatch user-data# token# (fn [e#] (~handler e# s#))))))))))

(defonce tool-callback (host-callback on-tool))
(defonce wait-for-callback (host-callback on-wait-for))
(defonce transport-callback (host-callback on-transport))
(defonce toolkit-wait-for-callback (host-callback on-toolkit-wait-for))
(defonce skill-provider-callback (host-callback on-skill-provider))
(defonce on-error-callback (host-callback on-error))
(defonce generate-callback (host-callback on-generate))

(defn- named-callback
  "A callback taking a name and a JSON argument (a hook and its event, a store operation and
  its request): `(handler entry name arg)` runs on the host pool."
  [handler]
  (reify HookCallback
    (invoke [_ user-data name arg token]
      (let [token (long token)]
        (guarded token
                 (fn []
                   (let [n (ffi/read-string-at name)
                         a (ffi/read-string-at arg)]
                     (dispatch user-data token (fn [e] (handler e n a))))))))))

(defonce hook-callback (named-callback on-hook))
(defonce store-callback (named-callback on-store))

(defn observe
  "Runs `thunk`, a call of the host's observer under option `k`. An observer cannot fail the
  run, so what it throws is printed on *err* (never back into JNA, which would drop it)."
  [k thunk]
  (try (thunk)
       (catch Throwable e
         (try (binding [*out* *err*] (println (str "WARNING: toolnexus: " k " threw: " (message e))))
              (catch Throwable _ nil)))))

(defn- sink-callback
  "A callback handing each JSON event of a run to the entry's function under `k` (see
  `observe`), called on the library's thread with nothing to complete, in order."
  [k]
  (reify MetricCallback
    (invoke [_ user-data event]
      (when-let [f (get (entry-of user-data) k)]
        (observe k #(f (json/read-str (ffi/read-string-at event))))))))

(defonce on-metric-callback (sink-callback :on-metric))

(defonce event-callback
  ;; A streamed run's steps (tn_client_stream's on_event), for the run's :on-event.
  (sink-callback :on-event))

(defonce on-warning-callback
  ;; What a run warns about (a tool's content part sent as its text placeholder, once per kind
  ;; of part and client), printed as the port prints it: on *out*, the engine's message
  ;; starting "[toolnexus]".
  (reify MetricCallback
    (invoke [_ _ warning]
      (try (println (:message (json/read-str (ffi/read-string-at warning))))
           (catch Throwable _ nil)))))

(defonce free-callback
  (reify FreeCallback
    (invoke [_ user-data]
      (try (unregister! user-data) (catch Throwable _ nil)))))

;; The library's threads stay attached to the JVM between callbacks (attaching costs more than
;; the call), as daemon threads, so they never hold a finished program open.
(defonce ^:private thread-setup
  (let [init (CallbackThreadInitializer. true false "toolnexus-callback")]
    (doseq [cb [tool-callback wait-for-callback transport-callback on-error-callback hook-callback
                toolkit-wait-for-callback skill-provider-callback on-metric-callback generate-callback
                store-callback on-warning-callback]]
      (Native/setCallbackThreadInitializer cb init))
    true))

(defn generate-pointer
  "The generate trampoline, for `tn_client_new_in_process`."
  ^Pointer []
  (CallbackReference/getFunctionPointer generate-callback))

(defn callbacks-struct
  "A `tn_callbacks` for a client entry, laid out as the header declares it: nine pointers and
  a uint32 (`hook_mask`, padded to a pointer) in this order: user_data, free_user_data,
  wait_for, transport, hook, hook_mask, on_error, body_transform (left NULL: the Clojure port
  has no body transform), on_metric, on_warning (always: printed, see on-warning-callback)."
  ^Memory [^Pointer user-data entry]
  (let [p Native/POINTER_SIZE
        m (doto (Memory. (* 10 p)) (.clear))
        fp (fn [cb] (CallbackReference/getFunctionPointer cb))
        mask (hook-mask (:hooks entry))]
    (.setPointer m 0 user-data)
    (.setPointer m p (fp free-callback))
    (when (:wait-for entry) (.setPointer m (* 2 p) (fp wait-for-callback)))
    (when (:http-client entry) (.setPointer m (* 3 p) (fp transport-callback)))
    (when (pos? mask)
      (.setPointer m (* 4 p) (fp hook-callback))
      (.setInt m (* 5 p) (int mask)))
    (when (:on-error entry) (.setPointer m (* 6 p) (fp on-error-callback)))
    (when (:on-metric entry) (.setPointer m (* 8 p) (fp on-metric-callback)))
    (.setPointer m (* 9 p) (fp on-warning-callback))
    m))

(defn toolkit-callbacks-struct
  "A `tn_toolkit_callbacks` for a toolkit entry (`{:tools :wait-for :skill-provider}`), laid out
  as the header declares it: five pointers in this order: user_data, free_user_data, tool,
  wait_for, skill_provider."
  ^Memory [^Pointer user-data entry]
  (let [p Native/POINTER_SIZE
        m (doto (Memory. (* 5 p)) (.clear))
        fp (fn [cb] (CallbackReference/getFunctionPointer cb))]
    (.setPointer m 0 user-data)
    (.setPointer m p (fp free-callback))
    (.setPointer m (* 2 p) (fp tool-callback))
    (when (:wait-for entry) (.setPointer m (* 3 p) (fp toolkit-wait-for-callback)))
    (when (:skill-provider entry) (.setPointer m (* 4 p) (fp skill-provider-callback)))
    m))

(defn store-callbacks-struct
  "A `tn_store_callbacks` for a host store entry (`{:get :save}`), laid out as the header
  declares it: three pointers in this order: user_data, free_user_data, store."
  ^Memory [^Pointer user-data]
  (let [p Native/POINTER_SIZE
        m (doto (Memory. (* 3 p)) (.clear))
        fp (fn [cb] (CallbackReference/getFunctionPointer cb))]
    (.setPointer m 0 user-data)
    (.setPointer m p (fp free-callback))
    (.setPointer m (* 2 p) (fp store-callback))
    m))
