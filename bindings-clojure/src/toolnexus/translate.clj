(ns toolnexus.translate
  "Single-turn translation (SPEC §11), with the API of the Clojure port: one OpenAI-shaped turn
  through the client's provider, exactly one call, no loop, no tool run, no state. The
  conversions are the engine's."
  (:require [toolnexus.client :as client]
            [toolnexus.impl.convert :as convert]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool]))

(defn translate
  "Translates one turn. `client` is a `toolnexus.client/create-client` map. `request`:

    :messages     the OpenAI `messages`, verbatim (assistant turns with `tool_calls`,
                  `tool` results with `tool_call_id`)
    :tools        the OpenAI `tools`, verbatim: declared, never run
    :toolkit      a toolkit whose tools are declared first and never run
    :toolChoice   the OpenAI `tool_choice` (converted for an Anthropic provider)
    :system       replaces the system prompt
    :maxTokens    this call's max_tokens (the default otherwise)

  Returns `{:text :toolCalls [{:id :name :arguments}] :finishReason (\"stop\" | \"tool_calls\"
  | \"length\" | \"content_filter\") :usage {:prompt-tokens :completion-tokens :total-tokens}
  :model :raw}`; `:arguments` is a JSON string. The client's retries, `:request-params`,
  `:before-llm`/`:after-llm` hooks (once) and `:on-metric` apply as in a run. Throws ex-info
  (kind `:invalid_argument` for a bad request) as `run` does."
  [client request]
  ;; Every key but :toolkit goes to the engine, which reads and checks them all.
  (let [c (client/native-client client)
        tk (tool/native (:toolkit request))
        body (into {} (remove (comp nil? val)) (dissoc request :toolkit))
        [status text] (ffi/call-result "tn_client_translate" (ffi/ptr c) (ffi/ptr tk)
                                       (ffi/c-string (json/write-str body)) nil)]
    (ffi/keep-alive c)
    (ffi/keep-alive tk)
    (if (zero? status)
      (convert/translate-result (json/read-str text))
      (throw (client/run-error text status)))))

(defn tool-calls-json
  "A result's tool calls as an OpenAI `tool_calls` array, for an assistant message."
  [result]
  (mapv (fn [tc] {:id (:id tc) :type "function" :function {:name (:name tc) :arguments (:arguments tc)}})
        (:toolCalls result)))
