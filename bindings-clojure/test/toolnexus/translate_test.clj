(ns toolnexus.translate-test
  "Translation (SPEC §11) through the Clojure API: one call to a scripted Anthropic-style
  provider, the turn back OpenAI-shaped, the toolkit declared and never run."
  (:require [clojure.test :refer [deftest is]]
            [toolnexus.client :as client]
            [toolnexus.content :as content]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool]
            [toolnexus.translate :as translate]))

(deftest an-anthropic-turn-comes-back-openai-shaped
  (let [sent (atom [])
        http (fn [_ _ body]
               (swap! sent conj (json/read-str body))
               {:status 200 :headers {}
                :body (json/write-str {:content [{:type "tool_use" :id "t1" :name "add" :input {:a 1}}]
                                       :stop_reason "tool_use" :usage {:input_tokens 3 :output_tokens 1}})})
        ran (atom 0)
        tk (tool/toolkit [(tool/tool {:name "add" :execute (fn [_] (swap! ran inc) (tool/success "2"))})])
        c (client/create-client {:base-url "http://mock.invalid" :style "anthropic" :model "m" :api-key "k"
                                 :http-client http})
        r (translate/translate c {:messages [{:role "system" :content "Brief."} {:role "user" :content "go"}]
                                  :tools [{:type "function" :function {:name "w" :parameters {:type "object"}}}]
                                  :toolkit tk :toolChoice "required" :maxTokens 32})]
    (is (= "tool_calls" (:finishReason r)))
    (is (= [{:id "t1" :name "add" :arguments "{\"a\":1}"}] (:toolCalls r)))
    (is (= {:prompt-tokens 3 :completion-tokens 1 :total-tokens 4} (:usage r)))
    (is (= [{:id "t1" :type "function" :function {:name "add" :arguments "{\"a\":1}"}}] (translate/tool-calls-json r)))
    (is (zero? @ran) "no tool runs")
    (is (= 1 (count @sent)))
    (let [b (first @sent)]
      (is (= ["Brief." 32 {:type "any"}] [(:system b) (:max_tokens b) (:tool_choice b)]))
      (is (= ["add" "w"] (mapv :name (:tools b)))))))

(deftest bad-requests-throw-before-sending
  (let [c (client/create-client {:base-url "http://mock.invalid/v1" :model "m" :api-key "k"
                                 :http-client (fn [_ _ _] (throw (AssertionError. "nothing may be sent")))})]
    (is (= :invalid_argument (:kind (ex-data (is (thrown? clojure.lang.ExceptionInfo (translate/translate c {:tools []})))))))
    (is (thrown? clojure.lang.ExceptionInfo (translate/translate c {:messages [] :nope 1})))))

(deftest parts-go-out-as-anthropic-blocks-and-the-llm-event-lists-them
  (let [sent (atom [])
        events (atom [])
        http (fn [_ _ body]
               (swap! sent conj (json/read-str body))
               {:status 200 :headers {}
                :body (json/write-str {:content [{:type "text" :text "a chart"}] :stop_reason "end_turn"})})
        c (client/create-client {:base-url "http://mock.invalid" :style "anthropic" :model "m" :api-key "k"
                                 :http-client http :on-metric #(swap! events conj %)})
        png (content/from-bytes (byte-array [0x89 0x50 0x4e 0x47 0x0d 0x0a 0x1a 0x0a]) "image/png")
        r (translate/translate c {:messages [{:role "user" :content [{:type "text" :text "what is this"} png]}
                                             {:role "assistant" :tool_calls [{:id "c1" :type "function"
                                                                              :function {:name "shot" :arguments "{}"}}]}
                                             {:role "tool" :tool_call_id "c1" :content [{:type "text" :text "taken"} png]}]})
        block {:type "image" :source {:type "base64" :media_type "image/png" :data "iVBORw0KGgo="}}
        msgs (:messages (first @sent))
        llm (first (filter #(= "llm" (name (:event %))) @events))]
    (is (= "a chart" (:text r)))
    (is (= [{:type "text" :text "what is this"} block] (:content (first msgs))))
    (is (= [{:type "text" :text "taken"} block] (:content (first (:content (nth msgs 2))))))
    (is (= [{:type "image" :mimeType "image/png" :bytes 8} {:type "image" :mimeType "image/png" :bytes 8}]
           (:parts llm)))
    (is (not (.contains (pr-str @events) "iVBORw0KGgo=")) "an event never carries a part's data")))
