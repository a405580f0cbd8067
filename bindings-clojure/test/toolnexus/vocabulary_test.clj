(ns toolnexus.vocabulary-test
  "The data side of the API: Requests, Answers, ToolResults, tools and toolkits, the library
  load itself, and what run-example puts on a script's classpath."
  (:require [clojure.data.json :as data.json]
            [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.tool :as tool]))

(deftest the-library-loads-with-the-abi-this-binding-was-written-for
  (is (= ffi/abi-version (ffi/loaded-abi-version)))
  (is (seq (ffi/version))))

;; ---------------------------------------------------------------------------------------------
;; run-example's classpath

(defn- binding-dir
  "bindings-clojure/, found from where toolnexus/client.clj was loaded; nil when the sources
  come from a jar."
  ^java.io.File []
  (let [u (io/resource "toolnexus/client.clj")]
    (when (= "file" (.getProtocol u))
      (-> (io/file (.toURI u)) .getParentFile .getParentFile .getParentFile))))

(defn- run-example
  "Runs `script` (text) through run-example with TOOLNEXUS_EXTRA_CLASSPATH set to `extra`
  (removed when nil); returns [exit-code stdout]."
  [dir script extra]
  (let [f (doto (java.io.File/createTempFile "classpath-probe" ".clj") (.deleteOnExit))
        _ (spit f script)
        pb (doto (ProcessBuilder. ^java.util.List [(str (io/file dir "run-example")) (str f)])
             (.redirectErrorStream true))
        env (.environment pb)]
    (.remove env "TOOLNEXUS_EXTRA_CLASSPATH")
    (when extra (.put env "TOOLNEXUS_EXTRA_CLASSPATH" extra))
    (when-let [lib (System/getProperty "toolnexus.lib")]
      (.put env "TOOLNEXUS_LIB" lib))
    (let [p (.start pb)
          out (slurp (.getInputStream p))]
      [(.waitFor p) out])))

(deftest run-example-puts-only-the-library-on-the-classpath
  (if-let [dir (binding-dir)]
    (let [tmp (.toFile (java.nio.file.Files/createTempDirectory "extra-cp" (make-array java.nio.file.attribute.FileAttribute 0)))
          a (doto (io/file tmp "a") (.mkdirs))
          b (doto (io/file tmp "b") (.mkdirs))
          _ (spit (io/file a "marker_a.txt") "a")
          _ (spit (io/file b "marker_b.txt") "b")
          probe (str "(prn (mapv #(some? (clojure.java.io/resource %))"
                     " [\"toolnexus/client.clj\" \"koine/json.clj\" \"marker_a.txt\" \"marker_b.txt\"]))\n")
          seen (fn [extra]
                 (let [[code out] (run-example dir probe extra)]
                   (is (zero? code) out)
                   (read-string (last (str/split-lines (str/trim out))))))]
      (testing "the binding, and not the test-only koine.json stand-in"
        (is (= [true false false false] (seen nil))))
      (testing "TOOLNEXUS_EXTRA_CLASSPATH adds the caller's entries, ':'-separated"
        (is (= [true false true true] (seen (str a java.io.File/pathSeparator b))))))
    (println "NOTE: the sources come from a jar; not checking run-example's classpath")))

(deftest answer-declined-has-no-reason-unless-given
  (is (= {:id "sus-1" :ok false} (client/answer-declined "sus-1")))
  (is (not (contains? (client/answer-declined "sus-1") :reason)))
  (is (= {:id "sus-1" :ok false :reason "not today"} (client/answer-declined "sus-1" "not today")))
  (testing "as in the Clojure port ((make-answer id false nil reason)), a nil reason is no reason"
    (is (= {:id "sus-1" :ok false} (client/answer-declined "sus-1" nil)))
    (is (not (contains? (client/answer-declined "sus-1" nil) :reason)))
    (is (= (client/make-answer "sus-1" false nil nil) (client/answer-declined "sus-1" nil))))
  (testing "any other reason is carried as given, the empty string too"
    (is (= {:id "sus-1" :ok false :reason ""} (client/answer-declined "sus-1" "")))
    (is (= "expired" (:reason (client/answer-declined "sus-1" "expired"))))))

(deftest answer-output-carries-the-reply-under-data-output
  (is (= {:id "r" :ok true :data {:output "yes"}} (client/answer-output "r" "yes")))
  (is (not (contains? (client/answer-output "r" "yes") :reason))))

(deftest as-answer-reads-string-keys-like-keyword-keys
  (is (= false (:ok (client/as-answer {"id" "x" "ok" false "reason" "no"}))))
  (is (= (client/as-answer {:id "x" :ok false :reason "no"})
         (client/as-answer {"id" "x" "ok" false "reason" "no"})))
  (testing "whichever constructor built it, a JSON round trip reads the same"
    (doseq [a [(client/answer-output "x" "yes")
               (client/answer-declined "x")
               (client/answer-declined "x" "expired")
               (client/make-answer "x" true {:city "Chennai"})]]
      (is (= a (client/as-answer (data.json/read-str (data.json/write-str a)))))))
  (testing "null optionals count as absent"
    (is (= {:id "x" :ok true} (client/as-answer {"id" "x" "ok" true "data" nil "reason" nil}))))
  (testing "nil is no answer"
    (is (nil? (client/as-answer nil))))
  (testing "a malformed answer is an error naming what is wrong, not a silent decline"
    (let [e (is (thrown? clojure.lang.ExceptionInfo (client/as-answer {"id" "x" "ok" "yes"})))]
      (is (= :invalid_argument (:kind (ex-data e))))
      (is (re-find #"ok" (ex-message e))))
    (is (thrown? clojure.lang.ExceptionInfo (client/as-answer {"id" "x"})))))

(deftest make-answer-sets-reason-only-on-a-decline
  (is (= {:id "x" :ok true} (client/make-answer "x" true)))
  (is (= {:id "x" :ok true :data {:city "Chennai"}} (client/make-answer "x" true {:city "Chennai"})))
  (is (= {:id "x" :ok false :reason "declined"} (client/make-answer "x" false nil "declined")))
  (is (not (contains? (client/make-answer "x" true nil "declined") :reason))))

(deftest make-request-keys-are-pinned
  (let [r (client/make-request "approval" "Deploy?")]
    (is (= #{:id :kind :prompt} (set (keys r))))
    (is (= "approval" (:kind r)))
    (is (= "Deploy?" (:prompt r)))
    (is (seq (:id r))))
  (is (= {:id "mine" :kind "input" :prompt "Which city?" :url "https://x" :data {:schema {:type "object"}}
          :expiresAt "2030-01-01T00:00:00Z"}
         (client/make-request "input" "Which city?" {:id "mine" :url "https://x" :data {:schema {:type "object"}}
                                                     :expiresAt "2030-01-01T00:00:00Z"})))
  (testing "absent optionals are left out, never nil"
    (is (= #{:id :kind :prompt} (set (keys (client/make-request "k" "p" {:url nil}))))))
  (testing "generated ids are unique"
    (is (not= (:id (client/make-request "k" "p")) (:id (client/make-request "k" "p"))))
    (is (not= (client/new-request-id) (client/new-request-id)))))

(deftest a-suspension-is-a-tool-result-carrying-its-request
  (let [req (client/make-request "approval" "Deploy?")
        r (client/suspend req)]
    (is (= {:output "Deploy?" :isError true :metadata {:pending req}} r))
    (is (= req (client/pending-of r)))
    (is (= "waiting" (:output (client/suspend req "waiting")))))
  (testing "the engine's output names the url"
    (is (= "Log in\nhttps://x/login"
           (:output (client/suspend (client/make-request "authorization" "Log in" {:url "https://x/login"}))))))
  (testing "an ordinary result suspends on nothing"
    (is (nil? (client/pending-of (tool/success "plain"))))))

(deftest auth-required-is-an-authorization-suspension
  (let [r (client/auth-required "https://x/login")]
    (is (= "Login required: https://x/login" (:output r)))
    (is (= true (:isError r)))
    (is (= "authorization" (:kind (client/pending-of r))))
    (is (= "https://x/login" (:url (client/pending-of r))))
    (is (= "Login required: https://x/login" (:prompt (client/pending-of r)))))
  (is (= "Log in to continue" (:prompt (client/pending-of (client/auth-required "https://x" "Log in to continue"))))))

(deftest tool-results
  (is (= {:output "4" :isError false} (tool/success 4)))
  (is (= {:output "no" :isError true} (tool/failure "no")))
  (is (= {:output "ok" :isError false :metadata {:k 1}} (tool/success "ok" {:k 1}))))

(deftest tool-defaults
  (let [t (tool/tool {:name "add" :execute (fn [_] (tool/success "x"))})]
    (is (= "add" (:name t)))
    (is (= "" (:description t)))
    (is (= {:type "object"} (:input-schema t)))
    (is (= "custom" (:source t))))
  (is (thrown? IllegalArgumentException (tool/tool {:execute identity})))
  (is (thrown? IllegalArgumentException (tool/tool {:name "x"})))
  (is (not (contains? (tool/tool {:name "r" :relay true}) :execute))))

(deftest sanitize-asks-the-engine
  (is (= "a_b_c" (tool/sanitize "a.b c")))
  (is (= "ok-name_1" (tool/sanitize "ok-name_1")))
  (is (= "caf_" (tool/sanitize "café")))
  (is (= "mcp__git_status_" (tool/sanitize "mcp__git/status?")))
  (is (= "__" (tool/sanitize "✓ ")))
  (is (= "" (tool/sanitize ""))))

(defn- echo-tool [nm out]
  (tool/tool {:name nm :description (str nm " tool")
              :execute (fn
                         ([args] (tool/success (str out (:text args))))
                         ([args ctx] (tool/success (str out (:text args) " answered " (get-in ctx [:answer :data :output])))))}))

(deftest toolkit-and-execute
  (let [tk (tool/toolkit [(echo-tool "upper" "first:")
                          (tool/tool {:name "boom" :execute (fn [_] (throw (ex-info "kaboom" {})))})
                          (tool/tool {:name "npe" :execute (fn [_] (throw (NullPointerException.)))})
                          (tool/tool {:name "bad" :execute (fn [_] 42)})
                          (echo-tool "upper" "second:")])]
    (testing "a later duplicate wins"
      (is (= #{"upper" "boom" "npe" "bad"} (set (keys (:tools tk)))))
      (is (= {:output "second:hi" :isError false} (tool/execute tk "upper" {:text "hi"}))))
    (testing "an exception from the tool is an error result with its message"
      (is (= {:output "kaboom" :isError true} (tool/execute tk "boom" {})))
      (is (= {:output "java.lang.NullPointerException" :isError true} (tool/execute tk "npe" {}))))
    (testing "a tool returning something else than a ToolResult is an error result"
      (let [r (tool/execute tk "bad" {})]
        (is (:isError r))
        (is (re-find #"not a ToolResult" (:output r)))))
    (testing "an unknown tool is an error result naming it"
      (let [r (tool/execute tk "nope" {})]
        (is (:isError r))
        (is (re-find #"nope" (:output r)))))
    (testing "with an answer in ctx the 2-arity runs"
      (is (= {:output "second:hi answered yes" :isError false}
             (tool/execute tk "upper" {:text "hi"} {:answer (client/answer-output "x" "yes")}))))
    (testing "as in the Clojure port ((if ctx (f args ctx) (f args))), any ctx runs the 2-arity"
      (is (= {:output "second:hi answered " :isError false} (tool/execute tk "upper" {:text "hi"} {:call-id "c9"})))
      (is (= {:output "second:hi answered " :isError false} (tool/execute tk "upper" {:text "hi"} {}))))
    (testing "no ctx, or a nil one, runs the 1-arity"
      (is (= {:output "second:hi" :isError false} (tool/execute tk "upper" {:text "hi"} nil))))
    (testing "a tool with only a 1-arity given a ctx is an error result (the wrong arity), not a throw"
      (let [tk (tool/toolkit [(tool/tool {:name "one" :execute (fn [_] (tool/success "one"))})])]
        (doseq [ctx [{} {:call-id "c9"} {:answer (client/answer-output "x" "yes")}]]
          (let [r (tool/execute tk "one" {} ctx)]
            (is (:isError r))
            (is (re-find #"Wrong number of args \(2\)" (:output r)))))
        (is (= {:output "one" :isError false} (tool/execute tk "one" {})))))
    (testing "with an answer, an unknown tool or a throwing tool is still an error result"
      (let [r (tool/execute tk "nope" {} {:answer (client/answer-output "x" "yes")})]
        (is (:isError r))
        (is (re-find #"nope" (:output r))))
      (let [tk (tool/toolkit [(tool/tool {:name "later" :execute (fn ([_] (tool/success "first"))
                                                                 ([_ _] (throw (ex-info "kaboom again" {}))))})])]
        (is (= {:output "kaboom again" :isError true}
               (tool/execute tk "later" {} {:answer (client/answer-declined "x")})))))
    (testing "a malformed answer is an error, not a silent decline"
      (let [e (is (thrown? clojure.lang.ExceptionInfo (tool/execute tk "upper" {} {:answer {:id "x" :ok "yes"}})))]
        (is (= :invalid_argument (:kind (ex-data e)))))))
  (testing "the engine hands the tool the answer in its normal form, with the call id"
    (let [seen (atom nil)
          tk (tool/toolkit [(tool/tool {:name "ask"
                                        :execute (fn ([_] (tool/success "first"))
                                                   ([args ctx] (reset! seen [args ctx]) (tool/success "again")))})])]
      (is (= {:output "again" :isError false}
             (tool/execute tk "ask" nil {:answer {"id" "x" "ok" true "data" {"output" "yes"} "reason" nil}
                                         :call-id "call_7"})))
      (is (= [{} {:answer {:id "x" :ok true :data {:output "yes"}} :call-id "call_7"}] @seen))
      (testing "and the timeout ctx gives"
        (tool/execute tk "ask" {} {:answer (client/answer-output "x" "yes") :timeout-ms 1500})
        (is (= 1500 (:timeout-ms (second @seen)))))
      (testing "a ctx without an answer hands the tool its call id (else \"\") and no :answer key"
        (tool/execute tk "ask" {:q 1} {:call-id "call_8" :timeout-ms 900})
        (is (= [{:q 1} {:call-id "call_8" :timeout-ms 900}] @seen))
        (tool/execute tk "ask" {} {})
        (is (= [{} {:call-id ""}] @seen)))
      (testing "concurrent direct calls each get their own ctx"
        (let [tk (tool/toolkit [(tool/tool {:name "id" :execute (fn ([_] (tool/success "no ctx"))
                                                                  ([_ ctx] (tool/success (:call-id ctx))))})])
              ids (mapv #(str "call_" %) (range 16))
              outs (mapv (fn [id] (future (:output (tool/execute tk "id" {} {:call-id id})))) ids)]
          (is (= ids (mapv deref outs)))))
      (testing "the registrations of direct calls are released"
        (is (zero? (.size ^java.util.Map @#'toolnexus.impl.host/direct-calls)))))))
