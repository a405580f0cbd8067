(ns ^:no-doc toolnexus.impl.convert
  "Pure mapping between the engine's JSON shapes and the Clojure port's data. The Clojure port
  keeps wire keys verbatim (`Request`, `Answer`, provider messages; a ToolResult's `:isError`)
  and kebab-cases what is its own (`RunResult`, `Usage`, client options). No I/O here.")

(defn tool-result->wire
  "A Clojure ToolResult `{:output :isError :metadata?}` as the engine's
  `{output, is_error, metadata?}`. `:is_error` is read too, for a result that went through
  JSON on its way back."
  [r]
  (cond-> {:output (str (:output r))
           :is_error (boolean (if (contains? r :isError) (:isError r) (:is_error r)))}
    (some? (:metadata r)) (assoc :metadata (:metadata r))))

(defn wire->tool-result
  "The engine's ToolResult as the Clojure port's `{:output :isError :metadata?}`."
  [m]
  (cond-> {:output (:output m) :isError (boolean (:is_error m))}
    (contains? m :metadata) (assoc :metadata (:metadata m))))

(defn- tool-call-record [m]
  {:name (:name m)
   :args (:args m)
   :output (:output m)
   :isError (boolean (:is_error m))
   :metadata (:metadata m)})

(defn- usage [u]
  {:prompt-tokens (:prompt_tokens u 0)
   :completion-tokens (:completion_tokens u 0)
   :total-tokens (:total_tokens u 0)})

(defn run-result
  "The engine's RunResult as the Clojure port's: `{:text :messages :tool-calls
  :tool-call-count :turns :usage {:prompt-tokens :completion-tokens :total-tokens} :model
  :status :limit? :pending?}`."
  [m]
  (cond-> {:text (:text m)
           :messages (:messages m)
           :tool-calls (mapv tool-call-record (:tool_calls m))
           :tool-call-count (:tool_call_count m)
           :turns (:turns m)
           :usage (usage (:usage m))
           :model (:model m)
           :status (:status m)}
    (contains? m :limit) (assoc :limit (:limit m))
    (contains? m :pending) (assoc :pending (:pending m))))

(def ^:private option-keys
  "Client options the engine reads, Clojure name -> engine name."
  {:base-url :base_url
   :style :style
   :model :model
   :api-key :api_key
   :headers :headers
   :system-prompt :system_prompt
   :max-turns :max_turns
   :retries :retries
   :retry-base-ms :retry_base_ms
   :retryable-statuses :retryable_statuses
   :timeout-ms :timeout_ms
   :max-tokens :max_tokens
   :request-params :request_params})

(def host-option-keys
  "Client options that are host functions, served through callbacks."
  #{:wait-for :http-client :hooks :on-error})

(defn unknown-options
  "The keys of `opts` that are neither engine options nor host functions."
  [opts]
  (remove #(or (contains? option-keys %) (contains? host-option-keys %)) (keys opts)))

(defn- string-map [m]
  (into {} (map (fn [[k v]] [(if (keyword? k) (subs (str k) 1) (str k)) (str v)])) m))

(defn client-options
  "The engine's options JSON data for Clojure client options (host functions left out,
  nil values dropped). `:style` may be a keyword; `:headers` names may be keywords. As in
  the Clojure port, a run with no API key anywhere is not an error: it sends no auth header."
  [opts]
  (into {:require_api_key false}
        (keep (fn [[k v]]
                (when-let [wire (option-keys k)]
                  (when (some? v)
                    [wire (case k
                            :style (name v)
                            :headers (string-map v)
                            v)]))))
        opts))
