(ns toolnexus.client-test
  "The loop through the Clojure API, against a scripted model served by a Clojure
  :http-client: durable halt and run-with-answer, tool exceptions as error results, host
  exceptions ending the run with the original as the cause, hooks, on-error, retries, and
  the lifetimes of the engine's handles."
  (:require [clojure.data.json :as data.json]
            [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool]))

;; ---------------------------------------------------------------------------------------------
;; a scripted OpenAI-style model

(defn- calls-turn [& calls]
  {:choices [{:message {:role "assistant" :content nil
                        :tool_calls (mapv (fn [[id nm args]]
                                            {:id id :type "function"
                                             :function {:name nm :arguments (json/write-str (or args {}))}})
                                          calls)}}]
   :usage {:prompt_tokens 10 :completion_tokens 5 :total_tokens 15}})

(defn- text-turn [t]
  {:choices [{:message {:role "assistant" :content t}}]
   :usage {:prompt_tokens 10 :completion_tokens 5 :total_tokens 15}})

(defn- scripted
  "An :http-client answering `turns` in order (a map is a 200 body, a fn is called with the
  request); returns [http-client requests-atom]."
  [& turns]
  (let [left (atom (vec turns))
        seen (atom [])]
    [(fn [url headers body]
       (swap! seen conj {:url url :headers headers :body (json/read-str body)})
       (let [[old _] (swap-vals! left #(vec (rest %)))
             t (first old)]
         (cond
           (nil? t) {:status 500 :headers {} :body "{\"error\":\"script exhausted\"}"}
           (fn? t) (t url headers body)
           :else {:status 200 :headers {"content-type" "application/json"} :body (json/write-str t)})))
     seen]))

(defn- make-client [http opts]
  (client/create-client (merge {:base-url "http://mock.invalid/v1" :style "openai" :model "mock-model"
                                 :api-key "test-key" :retry-base-ms 1 :http-client http}
                                opts)))

(defn- last-tool-message [request]
  (last (filter #(= "tool" (:role %)) (get-in request [:body :messages]))))

;; ---------------------------------------------------------------------------------------------
;; durable halt and run-with-answer

(defn- deploy-tool [seen]
  (tool/tool {:name "deploy" :description "Deploy the service."
              :execute (fn
                         ([args]
                          (swap! seen conj [:first args])
                          (client/suspend (client/make-request "approval" "Deploy to prod?" {:id "pnd-deploy"})))
                         ([args ctx]
                          (swap! seen conj [:again args ctx])
                          (if (get-in ctx [:answer :ok])
                            (tool/success (str "deployed " (get-in ctx [:answer :data :output])))
                            (tool/failure "not deployed"))))}))

(deftest durable-halt-then-run-with-answer
  (let [seen (atom [])
        tk (tool/toolkit [(deploy-tool seen)])
        [http requests] (scripted (calls-turn ["call_1" "deploy" {:env "prod"}]) (text-turn "Deployed."))
        c (make-client http {})
        halted (client/run c "deploy it" {:toolkit tk})]
    (testing "without :wait-for the suspension halts the run"
      (is (= "pending" (:status halted)))
      (is (= {:id "pnd-deploy" :kind "approval" :prompt "Deploy to prod?"} (:pending halted)))
      (is (= 1 (:turns halted)))
      (is (= 1 (count @requests)))
      (is (= [[:first {:env "prod"}]] @seen))
      (is (= ["user" "assistant" "tool"] (mapv :role (:messages halted)))))
    (testing "the halted state survives JSON (another process may resume it)"
      (let [stored (data.json/read-str (data.json/write-str (select-keys halted [:messages :pending])))
            answer (client/answer-output (get-in stored ["pending" "id"]) "now")
            done (client/run-with-answer c tk (get stored "messages") (get stored "pending") answer)]
        (is (= "done" (:status done)))
        (is (= "Deployed." (:text done)))
        (is (= "deployed now" (:output (last (:tool-calls done)))))
        (is (= false (:isError (last (:tool-calls done)))))
        (testing "the tool re-ran once with the answer and the provider's call id"
          (let [[kind args ctx] (last @seen)]
            (is (= 2 (count @seen)))
            (is (= :again kind))
            (is (= {:env "prod"} args))
            (is (= "call_1" (:call-id ctx)))
            (is (= answer (:answer ctx)))))
        (testing "the resumed request carries the real result, and no new user turn"
          (is (= 2 (count @requests)))
          (is (= "deployed now" (:content (last-tool-message (second @requests)))))
          (is (= 1 (count (filter #(= "user" (:role %)) (get-in (second @requests) [:body :messages]))))))))))

(deftest max-turns-zero-sends-nothing-and-ends-incomplete
  (let [[http requests] (scripted (text-turn "never"))
        r (client/run (make-client http {:max-turns 0}) "hi" {})]
    (is (= ["incomplete" "maxTurns" 0] [(:status r) (:limit r) (:turns r)]))
    (is (empty? @requests))))

(deftest run-with-answer-declined-tells-the-model
  (let [seen (atom [])
        tk (tool/toolkit [(deploy-tool seen)])
        [http requests] (scripted (calls-turn ["call_1" "deploy" {}]) (text-turn "Left alone."))
        c (make-client http {})
        halted (client/run c "deploy it" {:toolkit tk})
        done (client/run-with-answer c tk (:messages halted) (:pending halted)
                                     (client/answer-declined (:id (:pending halted)) "not today"))]
    (is (= "done" (:status done)))
    (is (= "declined/expired: Deploy to prod?" (:content (last-tool-message (second @requests)))))
    (is (= 1 (count @seen)) "a declined answer does not re-run the tool")))

(deftest run-with-answer-refuses-a-foreign-answer-id
  (let [tk (tool/toolkit [(deploy-tool (atom []))])
        [http requests] (scripted (calls-turn ["call_1" "deploy" {}]))
        c (make-client http {})
        halted (client/run c "deploy it" {:toolkit tk})
        e (is (thrown? clojure.lang.ExceptionInfo
                       (client/run-with-answer c tk (:messages halted) (:pending halted)
                                               (client/answer-output "someone-else" "yes"))))]
    (is (= :answer_mismatch (:kind (ex-data e))))
    (is (= 1 (count @requests)) "nothing was sent")))

(deftest inline-wait-for-resolves-and-reruns
  (let [seen (atom [])
        asked (atom [])
        tk (tool/toolkit [(deploy-tool seen)])
        [http _] (scripted (calls-turn ["call_1" "deploy" {}]) (text-turn "Done."))
        c (make-client http {:wait-for (fn [request]
                                         (swap! asked conj request)
                                         (client/answer-output (:id request) "ok"))})
        rr (client/run c "deploy it" {:toolkit tk})]
    (is (= "done" (:status rr)))
    (is (= [{:id "pnd-deploy" :kind "approval" :prompt "Deploy to prod?"}] @asked))
    (is (= "deployed ok" (:output (first (:tool-calls rr)))))))

(deftest in-a-run-only-the-re-run-with-an-answer-gets-a-ctx
  (testing "the first execution is the 1-arity, though the engine knows the call id and the time left"
    (let [seen (atom [])
          tk (tool/toolkit [(deploy-tool seen)])
          [http _] (scripted (calls-turn ["call_1" "deploy" {:env "prod"}]) (text-turn "Done."))
          c (make-client http {:timeout-ms 60000
                               :wait-for (fn [request] (client/answer-output (:id request) "ok"))})
          rr (client/run c "deploy it" {:toolkit tk})
          [first-run again] @seen
          [_ args ctx] again]
      (is (= "done" (:status rr)))
      (is (= [:first {:env "prod"}] first-run))
      (is (= {:env "prod"} args))
      (is (= {:id "pnd-deploy" :ok true :data {:output "ok"}} (:answer ctx)))
      (is (= "call_1" (:call-id ctx)))
      (is (< 0 (:timeout-ms ctx) 60001))))
  (testing "a suspending tool with only a 1-arity: its re-run is an error result, and the run goes on"
    (let [tk (tool/toolkit [(tool/tool {:name "ask" :execute (fn [_] (client/suspend (client/make-request "input" "Which city?")))})])
          [http requests] (scripted (calls-turn ["call_1" "ask" {}]) (text-turn "Never mind."))
          c (make-client http {:wait-for (fn [request] (client/answer-output (:id request) "Chennai"))})
          rr (client/run c "where?" {:toolkit tk})]
      (is (= "done" (:status rr)))
      (is (= "Never mind." (:text rr)))
      (is (:isError (first (:tool-calls rr))))
      (is (re-find #"Wrong number of args \(2\)" (:output (first (:tool-calls rr)))))
      (is (re-find #"Wrong number of args \(2\)" (:content (last-tool-message (second @requests))))))))

;; ---------------------------------------------------------------------------------------------
;; the deadline

(deftest timeout-ms-is-the-deadline-of-the-whole-run
  ;; Each model request answers well within :timeout-ms, the run as a whole does not: a
  ;; per-request HTTP timeout (the pure-Clojure port's older meaning) would let it finish.
  (let [slow (fn [turn] (fn [_ _ _]
                          (Thread/sleep 300)
                          {:status 200 :headers {} :body (json/write-str turn)}))
        [http requests] (scripted (slow (calls-turn ["c1" "noop" {}]))
                                  (slow (calls-turn ["c2" "noop" {}]))
                                  (slow (calls-turn ["c3" "noop" {}]))
                                  (slow (text-turn "too late")))
        tk (tool/toolkit [(tool/tool {:name "noop" :execute (fn [_] (tool/success "ok"))})])
        c (make-client http {:timeout-ms 700})
        e (is (thrown? clojure.lang.ExceptionInfo (client/run c "go" {:toolkit tk})))]
    (is (= :timeout (:kind (ex-data e))))
    (is (re-find #"700ms" (ex-message e)))
    (is (<= 2 (count @requests) 3) "the run ended at the deadline, not after every request")))

;; ---------------------------------------------------------------------------------------------
;; exceptions

(deftest a-tool-exception-becomes-an-error-result
  (let [tk (tool/toolkit [(tool/tool {:name "boom" :execute (fn [_] (throw (ex-info "kaboom" {})))})
                          (tool/tool {:name "upper" :execute (fn [args] (tool/success (.toUpperCase ^String (:text args))))})])
        [http requests] (scripted (calls-turn ["b1" "boom" {}] ["u1" "upper" {:text "x"}]) (text-turn "recovered"))
        rr (client/run (make-client http {}) "go" {:toolkit tk})]
    (is (= "done" (:status rr)))
    (is (= "recovered" (:text rr)))
    (is (= [{:name "boom" :args {} :output "kaboom" :isError true :metadata nil}
            {:name "upper" :args {:text "x"} :output "X" :isError false :metadata nil}]
           (:tool-calls rr)))
    (is (= ["kaboom" "X"] (mapv :content (filter #(= "tool" (:role %)) (get-in (second @requests) [:body :messages])))))))

(defn- ends-run-with-cause
  "Asserts that `(f)` throws ex-info of kind :host, message `msg`, cause `cause`."
  [f cause msg]
  (let [e (is (thrown? clojure.lang.ExceptionInfo (f)))]
    (is (= :host (:kind (ex-data e))))
    (is (identical? cause (ex-cause e)))
    (is (= msg (ex-message e)))))

(deftest a-wait-for-exception-ends-the-run-with-it-as-the-cause
  (let [boom (IllegalStateException. "the approval service is down")
        tk (tool/toolkit [(deploy-tool (atom []))])
        [http _] (scripted (calls-turn ["call_1" "deploy" {}]) (text-turn "never"))
        c (make-client http {:wait-for (fn [_] (throw boom))})]
    (ends-run-with-cause #(client/run c "deploy it" {:toolkit tk}) boom "the approval service is down")))

(deftest a-hook-exception-ends-the-run-with-it-as-the-cause
  (let [boom (ex-info "audit log unavailable" {:hook true})
        [http requests] (scripted (text-turn "never"))
        c (make-client http {:hooks {:before-llm (fn [_] (throw boom))}})]
    (ends-run-with-cause #(client/run c "hi" {}) boom "audit log unavailable")
    (is (empty? @requests))))

(deftest an-http-client-exception-ends-the-run-with-it-as-the-cause
  (let [boom (java.io.IOException. "proxy refused")
        c (make-client (fn [_ _ _] (throw boom)) {})]
    (ends-run-with-cause #(client/run c "hi" {}) boom "proxy refused")))

(deftest an-on-error-exception-ends-the-run-with-it-as-the-cause
  (let [boom (RuntimeException. "classifier crashed")
        [http _] (scripted (fn [_ _ _] {:status 503 :headers {} :body "{}"}) (text-turn "never"))
        c (make-client http {:on-error (fn [_] (throw boom))})]
    (ends-run-with-cause #(client/run c "hi" {}) boom "classifier crashed")))

(deftest concurrent-host-exceptions-each-end-their-own-run
  (let [c (make-client (fn [_ _ body]
                         (Thread/sleep 10)
                         (throw (ex-info (-> (json/read-str body) :messages last :content) {})))
                       {})
        runs (mapv (fn [i] (future (try (client/run c (str "p" i) {}) (catch Exception e e)))) (range 8))
        errors (mapv deref runs)]
    (is (= (mapv #(str "p" %) (range 8)) (mapv ex-message errors)))
    (is (= (mapv #(str "p" %) (range 8)) (mapv (comp ex-message ex-cause) errors))
        "each run's cause is the exception its own :http-client threw")
    (is (every? #(= :host (:kind (ex-data %))) errors))
    (is (zero? (.size ^java.util.Map @#'toolnexus.impl.host/thrown))
        "no host exception is left behind once its run has thrown it")))

(deftest an-http-error-is-an-ex-info-of-kind-http
  (let [[http requests] (scripted (fn [_ _ _] {:status 400 :headers {} :body "{\"error\":{\"message\":\"bad model\"}}"}))
        e (is (thrown? clojure.lang.ExceptionInfo (client/run (make-client http {}) "hi" {})))]
    (is (= :http (:kind (ex-data e))))
    (is (= 400 (:status (ex-data e))))
    (is (= 1 (count @requests)) "400 is not retried")))

;; ---------------------------------------------------------------------------------------------
;; transport, retries, hooks, on-error

(deftest the-http-client-sees-url-headers-and-body
  (let [[http requests] (scripted (text-turn "hi ✓"))
        rr (client/run (make-client http {:headers {:x-tenant "acme"}}) "héllo ✓" {})
        req (first @requests)]
    (is (= "hi ✓" (:text rr)))
    (is (= "http://mock.invalid/v1/chat/completions" (:url req)))
    (is (= "Bearer test-key" (get-in req [:headers "authorization"])))
    (is (= "acme" (get-in req [:headers "x-tenant"])))
    (is (= [{:role "user" :content "héllo ✓"}] (get-in req [:body :messages])))
    (is (= {:prompt-tokens 10 :completion-tokens 5 :total-tokens 15} (:usage rr)))))

(deftest a-reply-without-status-is-a-network-failure-and-is-retried
  (let [[http requests] (scripted (fn [_ _ _] {:error :timeout}) (text-turn "second try"))
        rr (client/run (make-client http {:retries 1}) "hi" {})]
    (is (= "second try" (:text rr)))
    (is (= 2 (count @requests)))))

(deftest retry-after-zero-and-a-retryable-status
  (let [[http requests] (scripted (fn [_ _ _] {:status 429 :headers {:retry-after "0"} :body "{}"})
                                  (text-turn "ok"))
        rr (client/run (make-client http {:retries 2}) "hi" {})]
    (is (= "ok" (:text rr)))
    (is (= 2 (count @requests)))))

(deftest on-error-may-refuse-a-retry
  (let [infos (atom [])
        [http requests] (scripted (fn [_ _ _] {:status 503 :headers {} :body "{}"}) (text-turn "never"))
        c (make-client http {:retries 2 :on-error (fn [info] (swap! infos conj info) :fail)})
        e (is (thrown? clojure.lang.ExceptionInfo (client/run c "hi" {})))]
    (is (= :http (:kind (ex-data e))))
    (is (= 503 (:status (ex-data e))))
    (is (= 1 (count @requests)))
    (is (= 503 (:status (first @infos))))
    (is (= true (:retryable? (first @infos))))))

(deftest hooks-observe-skip-and-rewrite
  (let [ran (atom 0)
        events (atom [])
        tk (tool/toolkit [(tool/tool {:name "lookup" :execute (fn [args] (swap! ran inc) (tool/success (str "found " (:q args))))})
                          (tool/tool {:name "cached" :execute (fn [_] (swap! ran inc) (tool/success "live"))})])
        [http requests] (scripted (calls-turn ["l1" "lookup" {:q "a"}] ["c1" "cached" {}]) (text-turn "done"))
        c (make-client http {:hooks {:before-llm (fn [ev] (swap! events conj [:before-llm (:turn ev)])
                                                   (when (zero? (:turn ev)) {:model "other-model"}))
                                     :after-llm (fn [ev] (swap! events conj [:after-llm (some? (:response ev))]) :ignored)
                                     :before-tool (fn [ev] (cond
                                                             (= "cached" (:name ev)) {:result (tool/success "from cache")}
                                                             (= "lookup" (:name ev)) {:args {:q "rewritten"}}))
                                     :after-tool (fn [ev] (when (= "lookup" (:name ev))
                                                            {:result (tool/success (str (:output (:result ev)) "!"))}))}})
        rr (client/run c "go" {:toolkit tk})]
    (is (= "done" (:status rr)))
    (is (= 1 @ran) "the skipped tool never ran")
    (is (= ["found rewritten!" "from cache"] (mapv :output (:tool-calls rr))))
    (is (= "other-model" (get-in (first @requests) [:body :model])) "a before-llm model applies to its turn")
    (is (= "mock-model" (get-in (second @requests) [:body :model])))
    (is (= [[:before-llm 0] [:after-llm true] [:before-llm 1] [:after-llm true]] @events))))

(deftest max-turns-stops-the-loop
  (let [[http _] (apply scripted (repeat 5 (calls-turn ["c" "noop" {}])))
        tk (tool/toolkit [(tool/tool {:name "noop" :execute (fn [_] (tool/success "ok"))})])
        rr (client/run (make-client http {:max-turns 2}) "go" {:toolkit tk})]
    (is (= "incomplete" (:status rr)))
    (is (= "maxTurns" (:limit rr)))
    (is (= 2 (:turns rr)))))

(deftest history-continues-a-conversation
  (let [[http requests] (scripted (text-turn "first") (text-turn "second"))
        c (make-client http {})
        one (client/run c "hello" {})
        two (client/run c "again" {:history (:messages one)})]
    (is (= "second" (:text two)))
    (is (= ["user" "assistant" "user"] (mapv :role (get-in (second @requests) [:body :messages]))))))

(deftest anthropic-style
  (let [[http requests] (scripted {:content [{:type "text" :text "bonjour"}]
                                   :usage {:input_tokens 7 :output_tokens 3}})
        rr (client/run (make-client http {:style :anthropic :base-url "http://mock.invalid" :system-prompt "terse"}) "hi" {})
        req (first @requests)]
    (is (= "bonjour" (:text rr)))
    (is (= "http://mock.invalid/v1/messages" (:url req)))
    (is (= "test-key" (get-in req [:headers "x-api-key"])))
    (is (= "terse" (get-in req [:body :system])))
    (is (= {:prompt-tokens 7 :completion-tokens 3 :total-tokens 10} (:usage rr)))))

(deftest concurrent-runs-on-one-client
  (let [http (fn [_ _ body]
               (let [prompt (-> (json/read-str body) :messages last :content)]
                 (Thread/sleep 20)
                 {:status 200 :headers {} :body (json/write-str (text-turn (str "re: " prompt)))}))
        c (make-client http {})
        runs (mapv (fn [i] (future (client/run c (str "p" i) {}))) (range 8))]
    (is (= (mapv #(str "re: p" %) (range 8)) (mapv (comp :text deref) runs)))))

(deftest options-are-checked
  (let [e (is (thrown? clojure.lang.ExceptionInfo (client/create-client {:base-url "http://x" :model "m" :store identity})))]
    (is (= :invalid_argument (:kind (ex-data e)))))
  (is (thrown? clojure.lang.ExceptionInfo (client/create-client {:base-url "http://x" :model "m" :hooks {:before-everything identity}})))
  (let [e (is (thrown? clojure.lang.ExceptionInfo (client/create-client {:base-url "http://x" :style "gemini" :model "m"})))]
    (is (= :invalid_argument (:kind (ex-data e)))))
  (is (thrown? clojure.lang.ExceptionInfo (client/create-client {:base-url "not a url" :model "m"})))
  (let [[http _] (scripted (text-turn "x"))]
    (is (thrown? clojure.lang.ExceptionInfo (client/run (make-client http {}) "hi" {:on-event identity})))))

(def ^:private key-variables ["OPENROUTER_API_KEY" "OPENAI_API_KEY" "ANTHROPIC_API_KEY"])

(deftest a-host-transport-needs-no-api-key
  (let [set-vars (filter #(seq (System/getenv ^String %)) key-variables)]
    (doseq [[style base auth] [["openai" "http://mock.invalid/v1" "authorization"]
                               ["anthropic" "http://mock.invalid" "x-api-key"]]]
      (testing style
        (let [[http requests] (scripted (if (= "openai" style)
                                          (text-turn "no key needed")
                                          {:content [{:type "text" :text "no key needed"}]}))
              c (client/create-client {:base-url base :style style :model "m" :http-client http})]
          (is (= "no key needed" (:text (client/run c "hi" {}))))
          (if (seq set-vars)
            (println (str "NOTE: " (first set-vars) " is set in this JVM, so the engine uses it: "
                          "not checking that a key-less " style " request has no " auth " header"))
            (is (not (contains? (:headers (first @requests)) auth))
                "the engine sends no auth header of its own")))))))

(deftest handles-are-released-when-unreachable
  (let [registry @#'toolnexus.impl.host/registry
        before (.size ^java.util.Map registry)]
    (dotimes [_ 200]
      (tool/toolkit [(tool/tool {:name "t" :execute (fn [_] (tool/success "x"))})])
      (make-client (fn [_ _ _] nil) {}))
    (is (<= (+ before 400) (.size ^java.util.Map registry)))
    (loop [i 0]
      (System/gc)
      (Thread/sleep 50)
      (when (and (< i 40) (> (.size ^java.util.Map registry) (+ before 10)))
        (recur (inc i))))
    (is (> (+ before 10) (.size ^java.util.Map registry))
        "the library's finalizers dropped the entries of collected clients and toolkits")))

(deftest the-engine-transport-reaches-a-loopback-server
  (let [bodies (atom [])
        server (doto (com.sun.net.httpserver.HttpServer/create (java.net.InetSocketAddress. "127.0.0.1" 0) 0)
                 (.createContext "/" (reify com.sun.net.httpserver.HttpHandler
                                       (handle [_ exchange]
                                         (let [ex ^com.sun.net.httpserver.HttpExchange exchange
                                               body (slurp (.getRequestBody ex) :encoding "UTF-8")
                                               out (.getBytes ^String (json/write-str (text-turn "over the wire")) "UTF-8")]
                                           (swap! bodies conj {:path (.getPath (.getRequestURI ex))
                                                               :auth (.getFirst (.getRequestHeaders ex) "authorization")
                                                               :body (json/read-str body)})
                                           (.add (.getResponseHeaders ex) "content-type" "application/json")
                                           (.sendResponseHeaders ex 200 (alength out))
                                           (with-open [o (.getResponseBody ex)] (.write o out))))))
                 (.start))]
    (try
      (let [c (client/create-client {:base-url (str "http://127.0.0.1:" (.getPort (.getAddress server)) "/v1")
                                     :model "mock-model" :api-key "test-key"})
            rr (client/run c "hello" {})]
        (is (= "over the wire" (:text rr)))
        (is (= [{:path "/v1/chat/completions" :auth "Bearer test-key"
                 :body {:model "mock-model" :messages [{:role "user" :content "hello"}]}}]
               @bodies)))
      (finally (.stop server 0)))))

;; ---------------------------------------------------------------------------------------------
;; metrics

(deftest on-metric-sees-every-event-and-metrics-renders-them
  (let [events (atom [])
        tk (tool/toolkit [(deploy-tool (atom []))])
        [http _] (scripted (calls-turn ["call_1" "deploy" {:env "prod"}]) (text-turn "Deployed."))
        c (make-client http {:on-metric #(swap! events conj %)
                             :wait-for (fn [r] (client/answer-output (:id r) "ok"))})]
    (is (not (re-find #"(?m)^toolnexus_" (client/metrics c))) "before a run: HELP and TYPE lines only")
    (is (= "Deployed." (:text (client/run c "ship it" {:toolkit tk}))))
    (is (= ["llm" "tool" "tool" "llm" "run"] (mapv :event @events)))
    (is (= [true false] ((juxt :pending :is_error) (nth @events 1))) "a suspension is pending, not an error")
    (is (= [2 1 30 "mock-model"] ((juxt :turns :tool_calls :total_tokens :model) (peek @events))))
    (let [text (client/metrics c)]
      (is (.contains text "toolnexus_llm_requests_total{model=\"mock-model\",status=\"ok\"} 2\n"))
      (is (.contains text "toolnexus_tool_calls_total{tool=\"deploy\",source=\"custom\",is_error=\"false\",pending=\"true\"} 1\n"))))
  (testing "a throwing :on-metric does not fail the run"
    (let [[http _] (scripted (text-turn "fine"))
          c (make-client http {:on-metric (fn [_] (throw (RuntimeException. "sink down")))})]
      (is (= "fine" (:text (client/run c "hi"))))))
  (testing "a failed run is counted, its error without the key"
    (let [events (atom [])
          http (fn [_ _ _] {:status 401 :headers {} :body "{\"error\":\"bad key test-key\"}"})
          c (make-client http {:on-metric #(swap! events conj %)})]
      (is (thrown? clojure.lang.ExceptionInfo (client/run c "hi")))
      (is (= ["llm" "run"] (mapv :event @events)))
      (is (and (:error (peek @events)) (not (.contains ^String (:error (peek @events)) "test-key"))))
      (is (.contains (client/metrics c) "toolnexus_run_errors_total{model=\"mock-model\"} 1\n")))))

;; ---------------------------------------------------------------------------------------------
;; in-process models

(deftest an-in-process-model-runs-the-loop
  (let [seen (atom [])
        tk (tool/toolkit [(deploy-tool (atom []))])
        c (client/create-in-process-client
           {:model "local" :system-prompt "Terse."
            :generate (fn [req]
                        (swap! seen conj req)
                        (if (= 1 (count @seen))
                          {:tool-calls [{:name "deploy" :arguments {:env "prod"}}] :usage {:prompt-tokens 2 :completion-tokens 1}}
                          {:content "shipped"}))})
        halted (client/run c "ship it" {:toolkit tk})]
    (is (= "pending" (:status halted)))
    (is (= 3 (get-in halted [:usage :total-tokens])))
    (let [done (client/run-with-answer c tk (:messages halted) (:pending halted)
                                       (client/answer-output (:id (:pending halted)) "yes"))]
      (is (= "shipped" (:text done))))
    (is (= ["local" {:role "system" :content "Terse."} "deploy"]
           [(:model (first @seen)) (first (:messages (first @seen))) (get-in (first @seen) [:tools 0 :function :name])])))
  (let [calls (atom 0)
        c (client/create-in-process-client {:model "m"
                                            :generate (fn [_] (swap! calls inc) (throw (RuntimeException. "my model blew up")))})
        e (is (thrown? clojure.lang.ExceptionInfo (client/run c "hi")))]
    (is (= "my model blew up" (ex-message (ex-cause e))))
    (is (= 1 @calls)))
  (doseq [[k v why] [[:base-url "http://x" #"no wire to configure"] [:api-key "k" #"no wire to configure"]
                     [:http-client (fn [_ _ _] nil) #"no wire to configure"] [:retries 3 #"nothing is retried"]
                     [:on-error (fn [_] :retry) #"nothing is retried"]]]
    (let [e (is (thrown? clojure.lang.ExceptionInfo
                         (client/create-in-process-client {:model "m" :generate (fn [_] {}) k v})))]
      (is (= :invalid_argument (:kind (ex-data e))))
      (is (re-find why (ex-message e)) (str k))))
  (is (thrown? clojure.lang.ExceptionInfo (client/create-in-process-client {:model "m"})))
  (is (thrown? clojure.lang.ExceptionInfo (client/create-client {:base-url "http://x" :model "m" :generate identity}))))
