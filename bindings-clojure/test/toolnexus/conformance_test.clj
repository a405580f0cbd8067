(ns toolnexus.conformance-test
  "Every scenario in tests/conformance/ replayed through the Clojure API: the scenario's tools
  are Clojure functions, its resolver a Clojure :wait-for, and the model a Clojure
  :http-client serving the scripted replies and recording what the engine sent (and, when the
  scenario has `before_tool`, a Clojure :before-tool hook raising its suspensions). Checked as
  tests/conformance/README.md says: the requests (path, pinned headers, exact body), the
  canonical RunResult or the error, the tool call counts, the resolver's Requests, and that
  every scripted reply was used."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.core :as core]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool])
  (:import (java.net URI)))

(defn- canonical-run-result
  "A Clojure RunResult back in the engine's canonical form (the inverse of
  `toolnexus.impl.convert/run-result`), as the conformance scenarios state results."
  [r]
  (cond-> {:text (:text r)
           :messages (:messages r)
           :tool_calls (mapv (fn [c] {:name (:name c)
                                      :args (:args c)
                                      :output (:output c)
                                      :is_error (boolean (:isError c))
                                      :metadata (:metadata c)})
                             (:tool-calls r))
           :tool_call_count (:tool-call-count r)
           :turns (:turns r)
           :usage {:prompt_tokens (get-in r [:usage :prompt-tokens])
                   :completion_tokens (get-in r [:usage :completion-tokens])
                   :total_tokens (get-in r [:usage :total-tokens])}
           :model (:model r)
           :status (:status r)}
    (contains? r :limit) (assoc :limit (:limit r))
    (contains? r :pending) (assoc :pending (:pending r))))

(defn scenario-dir
  "tests/conformance: the `toolnexus.conformance.dir` property, else TOOLNEXUS_CONFORMANCE_DIR,
  else found from the working directory."
  ^java.io.File []
  (io/file (or (not-empty (System/getProperty "toolnexus.conformance.dir"))
               (not-empty (System/getenv "TOOLNEXUS_CONFORMANCE_DIR"))
               (let [here (io/file "tests/conformance")]
                 (if (.isDirectory here) (str here) "../tests/conformance")))))

(defn scenario-files []
  (->> (.listFiles (scenario-dir))
       (filter #(str/ends-with? (.getName ^java.io.File %) ".json"))
       (sort-by #(.getName ^java.io.File %))))

;; ---------------------------------------------------------------------------------------------
;; the scenario's tools, resolver and model

(defn- pop-first! [a]
  (let [[old _] (swap-vals! a #(vec (rest %)))]
    (first old)))

(defn- behave
  "One run of a scenario tool: count it, wait its delay, act out its behaviour."
  [state tool-name b answer]
  (swap! (:calls state) update (keyword tool-name) (fnil inc 0))
  (when-let [d (:delay_ms b)] (Thread/sleep (long d)))
  (case (:type b)
    "text" (tool/success (:output b))
    "error_result" (tool/failure (:output b))
    "fail" (throw (ex-info (:message b) {:scenario-tool tool-name}))
    "suspend" (if (or (nil? answer) (:always b))
                (client/suspend (:request b))
                (let [out (get-in answer [:data :output])]
                  (tool/success (str/replace (:on_answer b) "{output}" (if (string? out) out "")))))))

(defn- scenario-tool [state spec]
  (let [b (:behavior spec)
        ;; The file's tools are native host functions; the port's `tool` says "custom" unless told.
        base {:name (:name spec) :description (:description spec) :input-schema (:input_schema spec)
              :source "native"}]
    (if (= "relay" (:type b))
      (tool/tool (assoc base :relay true))
      (tool/tool (assoc base :execute (fn
                                        ([_args] (behave state (:name spec) b nil))
                                        ([_args ctx] (behave state (:name spec) b (:answer ctx)))))))))

(def ^:private pinned-headers
  {"openai" ["authorization" "content-type"]
   "anthropic" ["x-api-key" "anthropic-version" "content-type"]})

(defn- mock-model
  "The :http-client: records each request and serves the step's next scripted reply."
  [state style]
  (fn [url headers body]
    (swap! (:requests state) conj
           {:path (or (not-empty (.getPath (URI. url))) "/")
            :headers (into {} (for [h (pinned-headers style)
                                    :let [v (get headers h)]
                                    :when v]
                                [(keyword h) v]))
            :body (json/read-str body)})
    (if-let [reply (pop-first! (:replies state))]
      (do (when-let [d (:delay_ms reply)] (Thread/sleep (long d))) ; the model answers late
          {:status (or (:status reply) 200)
           :headers (or (:headers reply) {})
           :body (json/write-str (:body reply))})
      {:status 599 :headers {} :body "{\"error\":{\"message\":\"no reply left\"}}"})))

(defn- take-answer!
  "Removes and returns the answer `for` the Request `id`, else the first naming none."
  [answers id]
  (let [taken (volatile! nil)]
    (swap! answers
           (fn [as]
             (let [i (or (first (keep-indexed #(when (and %2 (= id (:for %2))) %1) as))
                         (first (keep-indexed #(when-not (and %2 (contains? %2 :for)) %1) as)))]
               (vreset! taken (when i (nth as i)))
               (if i (into (subvec as 0 i) (subvec as (inc i))) as))))
    @taken))

(defn- resolver
  "The :wait-for: records each Request and answers with the scenario's answer for it, its id
  copied from the Request (nil = no answer)."
  [state]
  (fn [request]
    (swap! (:wait-requests state) conj request)
    (when-let [a (take-answer! (:answers state) (:id request))]
      (-> a (dissoc :for) (assoc :id (:id request))))))

(defn- gate
  "The scenario's `before_tool` hook: a call of a listed tool is answered with the suspension
  of the listed Request instead of running the tool."
  [gates]
  (fn [{:keys [name]}]
    (when-let [request (get gates (keyword name))]
      {:result (client/suspend request)})))

(defn- scenario-hooks
  "The scenario's hooks, or nil: `before_tool` gates, `before_llm` throws its message."
  [sc]
  (let [hooks (cond-> {}
                (map? (:before_tool sc)) (assoc :before-tool (gate (:before_tool sc)))
                (map? (:before_llm sc)) (assoc :before-llm (fn [_] (throw (ex-info (:fail (:before_llm sc)) {})))))]
    (not-empty hooks)))

(defn- recorder
  "The scenario's :on-error: records what it is told and answers the scenario's tier."
  [state tier]
  (fn [info]
    (swap! (:error-calls state) conj
           (cond-> {:attempt (:attempt info) :retryable (:retryable? info)}
             (:status info) (assoc :status (:status info))))
    (keyword tier)))

(defn- scenario-toolkit
  "With `sources`, a toolkit built from them by `toolnexus.core/build` (the file's tools as
  `:tools`); else the file's tools; else nil."
  [sc state]
  (let [tools (mapv #(scenario-tool state %) (:tools sc))]
    (if-let [src (:sources sc)]
      (core/build (cond-> {:tools tools}
                    (contains? src :skills) (assoc :skill-defs (:skills src))
                    (contains? src :skills_filter) (assoc :skills-filter (:skills_filter src))
                    (contains? src :skill_sample_limit) (assoc :skill-sample-limit (:skill_sample_limit src))
                    (contains? src :disable_skills) (assoc :disable-skills (:disable_skills src))
                    (contains? src :builtins) (assoc :builtins (:builtins src))
                    (contains? src :disable_tools) (assoc :disable-tools (:disable_tools src))))
      (when (vector? (:tools sc)) (tool/toolkit tools)))))

(defn- make-client [sc state]
  (let [c (:client sc)
        style (:style sc)]
    (client/create-client
     {:base-url (if (= "openai" style) "http://mock.invalid/v1" "http://mock.invalid")
      :style style
      :model (:model c)
      :api-key (or (:api_key c) "test-key")
      :system-prompt (:system_prompt c)
      :max-turns (:max_turns c)
      :retries (:retries c)
      :timeout-ms (:timeout_ms c)
      :retry-base-ms (or (:retry_base_ms c) 1)
      :request-params (:request_params c)
      :http-client (mock-model state style)
      :wait-for (when (vector? (:wait_for sc)) (resolver state))
      :on-error (when (:on_error sc) (recorder state (:on_error sc)))
      :hooks (scenario-hooks sc)})))

;; ---------------------------------------------------------------------------------------------
;; the replay

(def ^:private no-pending
  "What a resume step is given when the step before it did not halt."
  {:id "" :kind "" :prompt ""})

(defn- error-of [e]
  (let [d (ex-data e)]
    (cond-> {:kind (name (:kind d))}
      (contains? d :status) (assoc :status (:status d)))))

(defn- masked-metrics
  "The Prometheus text as lines, each duration sample's value (`_bucket`, `_sum`) made `*`: how
  long a call took is the one thing a replay cannot fix."
  [text]
  (mapv (fn [line]
          (let [metric (first (str/split line #"[{ ]" 2))]
            (if (and (not (str/starts-with? line "#")) (re-find #"_seconds_(bucket|sum)$" metric))
              (str (subs line 0 (str/last-index-of line " ")) " *")
              line)))
        (str/split-lines text)))

(defn replay
  "Replays one scenario file, making clojure.test assertions."
  [^java.io.File f]
  (let [sc (json/read-str (slurp f))
        state {:calls (atom {}) :requests (atom []) :wait-requests (atom []) :error-calls (atom [])
               :replies (atom []) :answers (atom (vec (:wait_for sc)))}
        tk (scenario-toolkit sc state)
        c (make-client sc state)]
    (loop [steps (:steps sc) i 0 previous nil]
      (when-let [step (first steps)]
        (reset! (:calls state) {})
        (reset! (:requests state) [])
        (reset! (:wait-requests state) [])
        (reset! (:error-calls state) [])
        (reset! (:replies state) (vec (:replies step)))
        (let [where (str (:name sc) " step " i)
              expect (:expect step)
              outcome (try
                        {:result (if-let [r (:run step)]
                                   (client/run c (:prompt r) (cond-> {:toolkit tk}
                                                               (contains? r :history) (assoc :history (:history r))))
                                   ;; the previous step's transcript and Request, unless the step gives its own
                                   (let [resume (:resume step)]
                                     (client/run-with-answer c tk (get resume :history (:messages previous))
                                                             (or (:pending resume) (:pending previous) no-pending)
                                                             (:answer resume))))}
                        (catch clojure.lang.ExceptionInfo e {:error e}))]
          (testing where
            (is (= (:requests expect) @(:requests state)) (str where ": requests"))
            (if (contains? expect :error)
              (is (= (:error expect) (some-> (:error outcome) error-of)) (str where ": error"))
              (is (= (:result expect) (some-> (:result outcome) canonical-run-result))
                  (str where ": result" (when-let [e (:error outcome)] (str " (threw " (ex-message e) ")")))))
            (is (= (or (:calls expect) {}) @(:calls state)) (str where ": calls"))
            (when (vector? (:wait_for sc))
              ;; One turn's suspensions are waited for concurrently: compared as a set.
              (is (= (frequencies (:wait_for_requests expect)) (frequencies @(:wait-requests state)))
                  (str where ": wait_for_requests")))
            (when (:on_error sc)
              (is (= (:on_error_calls expect) @(:error-calls state)) (str where ": on_error_calls")))
            (when (contains? expect :metrics)
              (is (= (:metrics expect) (masked-metrics (client/metrics c))) (str where ": metrics")))
            (is (empty? @(:replies state)) (str where ": every scripted reply was requested")))
          (recur (rest steps) (inc i) (:result outcome)))))))

(deftest every-conformance-scenario
  (let [files (scenario-files)]
    (is (<= 28 (count files)) (str "expected the 28 scenarios in " (scenario-dir)))
    (doseq [f files]
      (replay f))))
