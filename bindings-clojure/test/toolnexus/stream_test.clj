(ns toolnexus.stream-test
  "Streamed runs (`:on-event`) against a loopback server answering in server-sent events:
  text deltas reach the host while the answer is still arriving, steps come in the port's
  shapes and order with an inline suspension and a durable halt, and a throwing :on-event
  does not fail the run."
  (:require [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool])
  (:import (com.sun.net.httpserver HttpExchange HttpHandler HttpServer)
           (java.net InetSocketAddress)
           (java.util.concurrent CountDownLatch TimeUnit)))

(defn- delta-chunk [m] {:choices [{:index 0 :delta m}]})

(defn- call-answer [id nm]
  [(delta-chunk {:tool_calls [{:index 0 :id id :type "function" :function {:name nm :arguments "{}"}}]})
   {:choices [{:index 0 :delta {} :finish_reason "tool_calls"}]}
   {:choices [] :usage {:prompt_tokens 3 :completion_tokens 2 :total_tokens 5}}])

(defn- text-answer [& deltas]
  (concat (map #(delta-chunk {:content %}) deltas)
          [{:choices [{:index 0 :delta {} :finish_reason "stop"}]}
           {:choices [] :usage {:prompt_tokens 4 :completion_tokens 1 :total_tokens 5}}]))

(defn- sse-server
  "Serves `answers` in order, one per request; an answer item `:wait` holds the rest until
  `gate` opens (5 s at most, then `held` says so)."
  [answers gate held]
  (let [left (atom answers)]
    (doto (HttpServer/create (InetSocketAddress. "127.0.0.1" 0) 0)
      (.createContext
       "/" (reify HttpHandler
             (handle [_ exchange]
               (let [ex ^HttpExchange exchange
                     _ (slurp (.getRequestBody ex))
                     events (ffirst (swap-vals! left rest))]
                 (.add (.getResponseHeaders ex) "content-type" "text/event-stream")
                 (.sendResponseHeaders ex 200 0)
                 (with-open [o (.getResponseBody ex)]
                   (doseq [e (concat events ["[DONE]"])]
                     (if (= e :wait)
                       (when-not (.await ^CountDownLatch gate 5 TimeUnit/SECONDS) (reset! held true))
                       (do (.write o (.getBytes (str "data: " (if (string? e) e (json/write-str e)) "\n\n") "UTF-8"))
                           (.flush o)))))))))
      (.start))))

(defn- with-server [answers f]
  (let [gate (CountDownLatch. 1)
        held (atom false)
        srv (sse-server answers gate held)]
    (try (f (str "http://127.0.0.1:" (.getPort (.getAddress srv)) "/v1") gate held)
         (finally (.stop srv 0)))))

(defn- ask-tool []
  (tool/tool {:name "ask" :description "Ask the user."
              :execute (fn
                         ([_] (client/suspend (client/make-request "question" "Which colour?" {:id "q-1"})))
                         ([_ ctx] (tool/success (str "told " (get-in ctx [:answer :data :output])))))}))

(deftest text-arrives-while-the-answer-is-still-streaming
  (with-server [(concat (take 1 (text-answer "Hel")) [:wait] (text-answer "lo"))]
    (fn [url gate held]
      (let [events (atom [])
            c (client/create-client {:base-url url :model "m" :api-key "k"})
            r (client/run c "hi" {:on-event (fn [e]
                                               (swap! events conj e)
                                               (when (= "Hel" (:delta e)) (.countDown ^CountDownLatch gate)))})]
        (is (= "Hello" (:text r)))
        (is (false? @held) "the first delta reached :on-event before the server sent the rest")
        (is (= [{:type "text" :delta "Hel"} {:type "text" :delta "lo"}] (filterv #(= "text" (:type %)) @events)))
        (is (= {:type "done" :result r} (peek @events)))))))

(deftest steps-come-in-order-with-an-inline-suspension-and-a-durable-halt
  (testing "inline: pending comes before :wait-for is asked"
    (with-server [(call-answer "c1" "ask") (text-answer "ok")]
      (fn [url _ _]
        (let [events (atom [])
              c (client/create-client {:base-url url :model "m" :api-key "k"
                                       :wait-for (fn [r]
                                                   (swap! events conj [:wait-for (:id r)])
                                                   (client/answer-output (:id r) "blue"))})
              r (client/run c "go" {:toolkit (tool/toolkit [(ask-tool)]) :on-event #(swap! events conj %)})]
          (is (= "done" (:status r)))
          (is (= ["tool_call" "pending" :wait-for "tool_result" "text" "usage" "done"]
                 (mapv #(if (vector? %) (first %) (:type %)) @events)))
          (is (= {:type "tool_call" :id "c1" :name "ask" :args {}} (first @events)))
          (is (= {:type "tool_result" :id "c1" :name "ask" :output "told blue" :isError false}
                 (nth @events 3)))
          (is (= {:type "usage" :usage {:prompt-tokens 7 :completion-tokens 3 :total-tokens 10}}
                 (nth @events 5)))))))
  (testing "durable: the run halts on the pending request, and done carries the pending result"
    (with-server [(call-answer "c1" "ask")]
      (fn [url _ _]
        (let [events (atom [])
              c (client/create-client {:base-url url :model "m" :api-key "k"})
              r (client/run c "go" {:toolkit (tool/toolkit [(ask-tool)]) :on-event #(swap! events conj %)})]
          (is (= "pending" (:status r)))
          (is (= ["tool_call" "pending" "done"] (mapv :type @events)))
          (is (= "q-1" (get-in (second @events) [:request :id])))
          (is (= r (:result (peek @events)))))))))

(deftest a-throwing-on-event-does-not-fail-the-run
  (with-server [(text-answer "fine")]
    (fn [url _ _]
      (let [c (client/create-client {:base-url url :model "m" :api-key "k"})
            r (client/run c "hi" {:on-event (fn [e] (throw (RuntimeException. (str "sink down at " (:type e)))))})]
        (is (= "fine" (:text r)))))))
