(ns ^:no-doc toolnexus.impl.convert
  "Pure mapping between the engine's JSON shapes and the Clojure port's data. The Clojure port
  keeps wire keys verbatim (`Request`, `Answer`, provider messages; a ToolResult's `:isError`)
  and kebab-cases what is its own (`RunResult`, `Usage`, client options). No I/O here."
  (:require [clojure.string :as str]))

(defn tool-result->wire
  "A Clojure ToolResult `{:output :isError :metadata? :parts?}` as the engine's
  `{output, is_error, metadata?, parts?}`. `:is_error` is read too, for a result that went
  through JSON on its way back."
  [r]
  (cond-> {:output (str (:output r))
           :is_error (boolean (if (contains? r :isError) (:isError r) (:is_error r)))}
    (some? (:metadata r)) (assoc :metadata (:metadata r))
    (seq (:parts r)) (assoc :parts (vec (:parts r)))))

(defn wire->tool-result
  "The engine's ToolResult as the Clojure port's `{:output :isError :metadata? :parts?}`."
  [m]
  (cond-> {:output (:output m) :isError (boolean (:is_error m))}
    (contains? m :metadata) (assoc :metadata (:metadata m))
    (seq (:parts m)) (assoc :parts (:parts m))))

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

(defn translate-result
  "The engine's TranslateResult as the Clojure port's: `{:text :toolCalls [{:id :name
  :arguments}] :finishReason :usage {:prompt-tokens :completion-tokens :total-tokens} :model
  :raw}`."
  [m]
  {:text (:text m)
   :toolCalls (mapv #(select-keys % [:id :name :arguments]) (:tool_calls m))
   :finishReason (:finish_reason m)
   :usage (usage (:usage m))
   :model (:model m)
   :raw (:raw m)})

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

(defn stream-event
  "A streamed run's step as the Clojure port's `:on-event` map: `{:type \"text\" :delta}`,
  `{:type \"tool_call\" :id :name :args}`, `{:type \"tool_result\" :id :name :output
  :isError}`, `{:type \"pending\" :request}`, `{:type \"usage\" :usage {:prompt-tokens
  :completion-tokens :total-tokens}}`."
  [m]
  (case (:type m)
    "tool_result" {:type "tool_result" :id (:id m) :name (:name m) :output (:output m)
                   :isError (boolean (:is_error m))}
    "usage" {:type "usage" :usage (usage (:usage m))}
    m))

(def host-option-keys
  "Client options that are host functions, served through callbacks."
  #{:wait-for :http-client :hooks :on-error :on-metric :generate})

(defn engine-option-name
  "The engine's name for a Clojure option key: kebab-case to snake_case (`:timeout-ms` ->
  `\"timeout_ms\"`). Which names exist, and what their values must be, is the engine's to say."
  ^String [k]
  (str/replace (if (keyword? k) (name k) (str k)) "-" "_"))

(defn- header-names
  "Header names as strings (a keyword's name); the values go to the engine as given."
  [m]
  (if (map? m)
    (into {} (map (fn [[k v]] [(if (keyword? k) (subs (str k) 1) (str k)) v])) m)
    m))

(defn client-options
  "The engine's options JSON data for Clojure client options (host functions left out, nil
  values dropped), keyed by the engine's names. `:style` may be a keyword; `:headers` names
  may be keywords. As in the Clojure port, a run with no API key anywhere is not an error: it
  sends no auth header (`require_api_key` false, unless the options say otherwise)."
  [opts]
  (into {"require_api_key" false}
        (keep (fn [[k v]]
                (when (and (some? v) (not (contains? host-option-keys k)))
                  [(engine-option-name k) (case k
                                            :style (if (keyword? v) (name v) v)
                                            :headers (header-names v)
                                            v)])))
        opts))
