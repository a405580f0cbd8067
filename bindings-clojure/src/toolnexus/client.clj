(ns toolnexus.client
  "The model client and the suspension vocabulary, with the API of the Clojure port of
  toolnexus, over libtoolnexus (the engine written once, in Rust).

  Data is plain maps with keyword keys. Wire shapes keep their wire keys: a Request is
  `{:id :kind :prompt :url? :data? :expiresAt?}`, an Answer `{:id :ok :data? :reason?}`,
  transcripts are the provider's own messages. What is Clojure's own is kebab-case: client
  options and the RunResult `{:text :messages :tool-calls :tool-call-count :turns :usage
  :model :status :limit? :pending?}`.

  Failures are `ex-info`s whose data has the engine's stable error `:kind` (`:http`,
  `:network`, `:timeout`, `:protocol`, `:answer_mismatch`, `:host`, `:config`,
  `:invalid_argument`, `:conflict`, `:store`, ...), plus `:status` and `:body` for HTTP
  errors."
  (:require [clojure.string :as str]
            [toolnexus.content :as content]
            [toolnexus.impl.convert :as convert]
            [toolnexus.impl.error :as error]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.host :as host]
            [toolnexus.impl.json :as json]
            [toolnexus.memory :as memory]
            [toolnexus.tool :as tool]))

;; ---------------------------------------------------------------------------------------------
;; the suspension vocabulary

(defn- engine-pending
  "The engine's suspension ToolResult for a Request spec (an id is generated when absent)."
  [spec]
  (let [spec (into {} (remove (comp nil? val)) spec)]
    (-> (ffi/call-string "tn_pending" (ffi/c-string (json/write-str spec)))
        json/read-str
        convert/wire->tool-result)))

(defn pending-of
  "The Request a ToolResult suspends on (its `[:metadata :pending]`), or nil when it is an
  ordinary result."
  [result]
  (get-in result [:metadata :pending]))

(defn make-request
  "A Request `{:id :kind :prompt}` for a tool to suspend on. `opts` may carry `:id` (else the
  engine makes a unique one), `:url`, `:data` (a map, e.g. `{:schema ...}`) and `:expiresAt`
  (RFC 3339); absent ones are left out, never nil."
  ([kind prompt] (make-request kind prompt {}))
  ([kind prompt opts]
   (pending-of (engine-pending (merge (select-keys opts [:id :url :data :expiresAt])
                                      {:kind (str kind) :prompt (str prompt)})))))

(defn new-request-id
  "A fresh, unique Request id, as the engine makes them."
  []
  (:id (make-request "id" "id")))

(defn suspend
  "The ToolResult that suspends a tool on `request`: `{:output :isError true :metadata
  {:pending request}}`. The output (what the transcript holds while the request is open) is
  `output` when given, else the engine's: the prompt, plus the url on its own line."
  ([request] (engine-pending request))
  ([request output]
   (assoc (suspend request) :output (str output))))

(defn auth-required
  "An `authorization` suspension: the user must log in at `url`. `prompt` defaults to
  \"Login required: <url>\"; the output is \"Login required: <url>\"."
  ([url] (auth-required url (str "Login required: " url)))
  ([url prompt]
   (suspend (make-request "authorization" prompt {:url url})
            (str "Login required: " url))))

(defn as-answer
  "Any Answer a host holds, string or keyword keys (say, one that went through JSON), in its
  normal keyword form `{:id :ok :data? :reason?}`. nil stays nil (no answer). A malformed
  answer (no boolean `ok`, a non-map `data`, ...) throws ex-info of kind `:invalid_argument`
  naming what is wrong."
  [answer]
  (when (some? answer)
    (json/read-str (ffi/call-string "tn_answer_normalize" (ffi/c-string (json/write-str answer))))))

(defn make-answer
  "An Answer `{:id :ok :data? :reason?}`: `:data` only when given, `:reason` only when given
  and `ok` is false (the loop branches on `:ok` alone)."
  ([id ok] (make-answer id ok nil nil))
  ([id ok data] (make-answer id ok data nil))
  ([id ok data reason]
   (as-answer (cond-> {:id id :ok (boolean ok)}
                (some? data) (assoc :data data)
                (and (not ok) (some? reason)) (assoc :reason reason)))))

(defn answer-output
  "The Answer that supplies a reply: `{:id id :ok true :data {:output output}}`."
  [id output]
  (json/read-str (ffi/call-string "tn_answer_output" (ffi/c-string id) (ffi/c-string (str output)))))

(defn answer-declined
  "The Answer that refuses a request, as in the Clojure port: `(make-answer id false nil
  reason)`. `(answer-declined id)` and `(answer-declined id nil)` are `{:id id :ok false}`,
  with no `:reason` key at all; any other reason is carried as given, as a string (\"\"
  included). The advisory vocabulary is \"declined\", \"cancelled\", \"expired\", but any
  string is carried; the loop reads only `:ok`. The run goes on: the model sees
  `declined/expired: <prompt>`."
  ([id] (answer-declined id nil))
  ([id reason]
   (make-answer id false nil (some-> reason str))))

;; ---------------------------------------------------------------------------------------------
;; the client

(defn- check-options
  "What only the binding can check: the `:hooks` keys (functions never reach the engine) and
  option values that are functions where the engine takes data. Every other option, its name
  and its value, is checked by the engine."
  [opts]
  (let [bad-hooks (remove (host/hook-keys) (keys (:hooks opts)))
        fn-valued (filter (fn [[k v]] (and (fn? v) (not (contains? convert/host-option-keys k)))) opts)]
    (when (seq bad-hooks)
      (throw (ex-info (str "toolnexus: unknown hook(s) " (vec bad-hooks) "; known: "
                           (str/join " " (sort (host/hook-keys))))
                      {:kind :invalid_argument :code (ffi/status :invalid_argument) :hooks (vec bad-hooks)})))
    (when-let [[k] (first fn-valued)]
      (throw (ex-info (str "toolnexus: client option " k " takes a function, which this binding cannot hand to "
                           "the engine yet (host functions: " (str/join " " (sort convert/host-option-keys)) ")")
                      {:kind :invalid_argument :code (ffi/status :invalid_argument) :options [k]})))))

(defn- show-warnings!
  "Prints what the engine warned about while reading the options (a dropped `:request-params`
  key, an option it accepts but does not implement yet) on `*err*`: the engine never prints."
  [handle]
  (doseq [w (json/read-str (ffi/call-string "tn_client_warnings" (ffi/ptr handle)))]
    (binding [*out* *err*]
      (println (str "WARNING: toolnexus: " (:message w)))))
  (ffi/keep-alive handle))

(declare new-client)

(defn- remembering
  "The engine client like `handle`'s (options, callbacks, metrics) that remembers in `store`."
  [store handle]
  (try
    (ffi/handle "tn_client_free"
                (memory/with-native store #(ffi/call-handle "tn_client_with_store" (ffi/ptr handle) %)))
    (finally (ffi/keep-alive handle))))

(defn create-client
  "A client for one provider endpoint. Options:

    :base-url       required, e.g. \"https://api.openai.com/v1\", \"https://api.anthropic.com\"
    :style          \"openai\" (the default) or \"anthropic\" (a keyword works too)
    :model          required
    :api-key        else OPENROUTER_API_KEY, the style's own variable, OPENAI_API_KEY,
                    ANTHROPIC_API_KEY, read at run time; never logged
    :headers        extra request headers {name value}; they win over the engine's own
    :system-prompt  the system prompt
    :max-turns      model round trips per run (default 10)
    :retries        retries of a failed model call (default 2): 429/500/502/503/504/529
                    and network errors, with exponential backoff; Retry-After honoured
    :retry-base-ms  the backoff base (default 500)
    :retryable-statuses  extra statuses to retry
    :timeout-ms     the deadline of the WHOLE run, in ms (the engine's, the same in every
                    binding): counted from the start of `run` / `run-with-answer` across
                    every model request, retry, backoff, tool and :wait-for. When it passes,
                    the run stops at once (no further request is sent) and throws ex-info of
                    kind `:timeout`. Each model request gets what is left of it; a tool
                    re-run with an answer sees that as ctx `:timeout-ms`.
                    This is NOT a per-request HTTP timeout, which is what :timeout-ms is in
                    earlier releases of the pure-Clojure port (there it bounds each HTTP
                    request, and a request that times out is retried within :retries).
                    Its later releases make it a run deadline too, but check it only
                    before each model request, so a tool or :wait-for still running at the
                    deadline ends the run only at the next request; here the run ends at
                    the deadline itself (a late tool result is dropped). Unset: no
                    deadline; the engine's own HTTP client then gives each request 120 s.
    :max-tokens     anthropic max_tokens (default 4096)
    :request-params extra top-level body keys
    :wait-for       (fn [request] answer-or-nil): resolves a suspension inline; the tool
                    then re-runs with the answer. Without it a suspension halts the run
                    (status \"pending\") for `run-with-answer`.
    :http-client    (fn [url headers body] {:status :headers :body}): sends the model
                    requests instead of the engine's own HTTP client. `headers` is a map
                    of lowercase names to values, `body` the JSON text; the reply's `:body`
                    may be a string or data. A reply without `:status` (say `{:error
                    :timeout}`) is a network failure, retried like one. With no key
                    anywhere, `headers` has no auth header: the host authenticates.
    :hooks          {:before-llm :after-llm :before-tool :after-tool}, each (fn [event]):
                    :before-llm {:messages :tools :model :turn} -> nil or {:messages? :tools?
                    :model?}; :after-llm {:response :model :turn} (observe only);
                    :before-tool {:name :args :id :turn} -> nil, {:result} to skip the tool,
                    or {:args} to rewrite them; :after-tool {:name :args :result :id :turn}
                    -> nil or {:result} to replace it.
    :on-error       (fn [{:status :error :attempt :retryable?}]) -> :retry or :fail, for a
                    failed model call (still bounded by :retries).
    :on-metric      (fn [event]): each metric event, in order, on the library's thread (keep
                    it quick): {:event \"llm\" :model :status (\"ok\" | \"error\") :ms
                    :prompt_tokens :completion_tokens} per model call, {:event \"tool\" :tool
                    :source :is_error :ms :pending?} per tool execution (:pending true for a
                    suspension, never an error), {:event \"run\" :model :turns :tool_calls
                    :total_tokens :ms :error?} per run, last. What it throws is printed on
                    *err*; the run goes on. `metrics` counts the events either way.
    :store          where `ask` remembers conversations: a store map (`{:get :save}`, see
                    `toolnexus.memory`: `in-memory-store`, `sqlite-store`, or your own), or
                    the path of a SQLite file. Absent: an in-memory store of the client's own.

  An exception thrown by :wait-for, a hook, :http-client or :on-error ends the run: `run`
  throws ex-info of kind `:host` with that exception as its cause. An unknown option throws.
  The returned map holds the options and the engine's client; one client may run many times,
  also concurrently."
  [opts]
  (check-options opts)
  (when (contains? opts :generate)
    (throw (ex-info "toolnexus: create-client does not take :generate; use create-in-process-client"
                    {:kind :invalid_argument :code (ffi/status :invalid_argument) :options [:generate]})))
  (new-client (update opts :style #(or % "openai")) "tn_client_new" []))

(defn- new-client
  "Makes the engine client for `opts` with `export` (`extra` are its arguments after the
  callbacks) and returns the options map holding it."
  [opts export extra]
  (let [store (when (map? (:store opts)) (:store opts))
        engine-opts (try (json/write-str (convert/client-options (cond-> opts store (dissoc :store))))
                         (catch Exception e
                           (throw (ex-info (str "toolnexus: the client options are not JSON data: " (ex-message e))
                                           {:kind :invalid_argument :code (ffi/status :invalid_argument)}))))
        entry (select-keys opts [:wait-for :http-client :hooks :on-error :on-metric :generate])
        user-data (host/register! entry)
        callbacks (host/callbacks-struct user-data entry)
        p (try
            (apply ffi/call-handle export (ffi/c-string engine-opts) callbacks extra)
            (catch Exception e
              (host/unregister! user-data)
              (throw e)))
        handle (cond->> (ffi/handle "tn_client_free" p) store (remembering store))]
    (show-warnings! handle)
    (assoc opts ::native handle)))

(defn create-in-process-client
  "A client whose model runs in this process: no URL, no key, no socket. `:generate` is
  `(fn [request] answer)`: `request` is `{:messages :tools :model :body}` (the assembled
  OpenAI request), the answer one assistant message: `{:content \"...\"}` ends the turn,
  `{:tool-calls [{:name :arguments :id?}]}` asks for tools (`:arguments` data or a JSON
  string), `:usage` `{:prompt-tokens :completion-tokens}` optional. The other options are
  `create-client`'s but `:base-url`, `:api-key`, `:style`, `:http-client` (there is no wire)
  and `:retries`, `:on-error` (nothing is retried), which throw. What `:generate` throws ends
  the run at once."
  [opts]
  (when-not (fn? (:generate opts))
    (throw (ex-info "toolnexus: create-in-process-client requires a `:generate` function"
                    {:kind :invalid_argument :code (ffi/status :invalid_argument)})))
  (check-options (dissoc opts :generate))
  ;; The engine refuses the wire options; a host transport reaches it as "given".
  (let [engine (cond-> (dissoc opts :generate :http-client)
                 (contains? opts :http-client) (assoc "http_client" true))]
    (new-client (assoc engine :generate (:generate opts)) "tn_client_new_in_process"
                [(host/generate-pointer)])))

(declare native-client)

(defn metrics
  "Every run of `client` so far as Prometheus text (SPEC §8), the same bytes upstream's ports
  render: HELP and TYPE lines only before the first run."
  ^String [client]
  (let [c (native-client client)]
    (try (ffi/call-string "tn_client_metrics" (ffi/ptr c))
         (finally (ffi/keep-alive c)))))

(defn ^:no-doc run-error
  "The exception for a failed run: the engine's error, with the host's own exception as the
  cause when one ended the run (the error's `host_ref` names it)."
  [^String error-json status]
  (error/from-json error-json status #(host/take-thrown (:host_ref %))))

(defn- finish [[status text]]
  (if (zero? status)
    (convert/run-result (json/read-str text))
    (throw (run-error text status))))

(defn ^:no-doc native-client [client]
  (or (::native client)
      (throw (IllegalArgumentException. "toolnexus: not a client; make one with toolnexus.client/create-client"))))

(defn- run-input
  "Runs the engine's `input_json` data `input` on `client` with `toolkit`, blocking. With
  `on-event` the run is streamed and each step reaches it as it happens, then
  `{:type \"done\" :result r}` (not when the run throws)."
  ([client toolkit input] (run-input client toolkit input nil))
  ([client toolkit input on-event]
   (let [c (native-client client)
         tk (tool/native toolkit)
         in (ffi/c-string (json/write-str input))
         outcome (if on-event
                   (let [sink (host/register! {:on-event (comp on-event convert/stream-event)})]
                     (try
                       (ffi/call-result "tn_client_stream" (ffi/ptr c) (ffi/ptr tk) in nil host/event-callback sink)
                       (finally (host/unregister! sink))))
                   (ffi/call-result "tn_client_run" (ffi/ptr c) (ffi/ptr tk) in nil))]
     (ffi/keep-alive c)
     (ffi/keep-alive tk)
     (let [r (finish outcome)]
       (when on-event (host/observe :on-event #(on-event {:type "done" :result r})))
       r))))

(defn run
  "Runs the tool-calling loop for `prompt` and blocks until it ends. `prompt` is a string or a
  vector of content parts (`toolnexus.content`; a string item is a text part), in the order
  the model is to read them; an error part among them throws ex-info of kind
  `:content_part` before anything is sent, as does a part the engine refuses (or
  `:unsupported_part`, for one the provider's style cannot take). `ctx` is
  `{:toolkit tk :history [messages...] :conversation-id id :on-event f}` (all optional;
  `:history` is a prior transcript in the provider's message shape, e.g. the `:messages` of an
  earlier result; `:conversation-id` makes the run the next turn of that conversation in the
  client's store, as `ask` does). With `:on-event` the model's answers are streamed and `f`
  gets each step as it happens, on the library's thread, in order (see
  `toolnexus.impl.convert/stream-event`: text deltas, tool calls and results, a `pending`
  Request before `:wait-for` is asked or on a durable halt, the usage), then `{:type \"done\"
  :result r}`; what `f` throws is printed on *err* and the run goes on.

  Returns the RunResult `{:text :messages :tool-calls [{:name :args :output :isError
  :metadata}] :tool-call-count :turns :usage {:prompt-tokens :completion-tokens
  :total-tokens} :model :status}` where `:status` is \"done\", \"incomplete\" (with `:limit`,
  e.g. \"maxTurns\") or \"pending\" (with `:pending`, the Request the run halted on; resume
  with `run-with-answer`). Throws ex-info (see the namespace doc) when the run fails."
  ([client prompt] (run client prompt {}))
  ([client prompt ctx]
   (let [unknown (remove #{:toolkit :history :conversation-id :on-event} (keys ctx))]
     (when (seq unknown)
       (throw (ex-info (str "toolnexus: unsupported run option(s) " (vec unknown)
                            "; known: :toolkit :history :conversation-id :on-event")
                       {:kind :invalid_argument :options (vec unknown)}))))
   (when-let [bad (content/first-error prompt)]
     (throw (error/ex {:kind "content_part" :code (ffi/status :content_part) :message (:error bad)})))
   (run-input client (:toolkit ctx) (cond-> {:prompt prompt}
                                      (some? (:history ctx)) (assoc :history (:history ctx))
                                      (some? (:conversation-id ctx)) (assoc :id (:conversation-id ctx)))
              (:on-event ctx))))

(defn run-with-answer
  "Resumes a run that halted with status \"pending\": `history` is its `:messages`, `pending`
  its `:pending` Request, `answer` the Answer (its `:id` must echo the Request's, else ex-info
  of kind `:answer_mismatch`). The suspended tool re-runs with the answer (or, when
  declined, the model is told so), with no new user turn; the run goes on from there and
  returns a RunResult like `run`. `toolkit` is the halted run's toolkit (may be nil)."
  [client toolkit history pending answer]
  (let [c (native-client client)
        tk (tool/native toolkit)
        outcome (ffi/call-result "tn_client_run_with_answer" (ffi/ptr c) (ffi/ptr tk)
                                 (ffi/c-string (json/write-str (or history [])))
                                 (ffi/c-string (json/write-str pending))
                                 (ffi/c-string (json/write-str answer))
                                 nil)]
    (ffi/keep-alive c)
    (ffi/keep-alive tk)
    (finish outcome)))

;; ---------------------------------------------------------------------------------------------
;; conversation memory

(def ^{:arglists '([])} in-memory-store
  "The engine's in-memory store, a client's default (`toolnexus.memory/in-memory-store`)."
  memory/in-memory-store)

(defn conversation-store
  "The client's store (see `toolnexus.memory`): the store map given as `:store`, else the
  engine's store the client remembers in (its own in-memory one, or the SQLite file a path
  named). Reading and writing it is what `ask` sees."
  [client]
  (let [store (:store client)]
    (if (map? store)
      store
      (let [c (native-client client)]
        (try (memory/of-handle (ffi/call-handle "tn_client_store" (ffi/ptr c))
                               (if (some? store) {:path (str store)} {}))
             (finally (ffi/keep-alive c)))))))

(defn ask
  "`run`, remembering the conversation: with `:id` in `ctx` (`{:toolkit :id :history?}`) the
  client's store supplies the history and keeps the result, so the next `ask` with that id
  continues it; a run that halts (status \"pending\") waits there for `ask-with-answer`.
  Without an id it is a stateless `run`. A conversation another run is using, or one waiting
  on a request, throws ex-info of kind `:conflict`."
  ([client prompt] (ask client prompt {}))
  ([client prompt ctx]
   (run client prompt (cond-> (dissoc ctx :id)
                        (some? (:id ctx)) (assoc :conversation-id (:id ctx))))))

(defn ask-with-answer
  "Resumes conversation `id`, halted on `pending`, with `answer`, loading and saving through
  the client's store, so a run halted in one process resumes in another by id. `pending` may
  be nil with the engine's stores (they record it). A resume runs once: a second one, or
  another answer to the same request, throws ex-info of kind `:conflict`. Returns a RunResult
  like `run`."
  [client toolkit id pending answer]
  (run-input client toolkit (cond-> {:id id :answer answer}
                              (some? pending) (assoc :pending pending))))
