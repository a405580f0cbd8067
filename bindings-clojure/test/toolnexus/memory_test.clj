(ns toolnexus.memory-test
  "Conversation memory through the Clojure API: ask by id, a host store, a halt resumed by
  id exactly once, SQLite across store handles, pending runs. The scripted model and the
  deploy tool are client-test's."
  (:require [clojure.java.io :as io]
            [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.client-test]
            [toolnexus.memory :as memory]
            [toolnexus.tool :as tool]))

(def ^:private scripted @#'toolnexus.client-test/scripted)
(def ^:private calls-turn @#'toolnexus.client-test/calls-turn)
(def ^:private text-turn @#'toolnexus.client-test/text-turn)
(def ^:private make-client @#'toolnexus.client-test/make-client)
(def ^:private deploy-tool @#'toolnexus.client-test/deploy-tool)

(defn- user-contents [request]
  (mapv :content (filter #(= "user" (:role %)) (get-in request [:body :messages]))))

(deftest ask-remembers-by-id
  (let [[http requests] (scripted (text-turn "one") (text-turn "two") (text-turn "solo"))
        c (make-client http {})]
    (client/ask c "first question" {:id "muthu"})
    (let [second-r (client/ask c "second question" {:id "muthu"})]
      (is (= "two" (:text second-r)))
      (client/ask c "unrelated")
      (is (= ["first question" "second question"] (user-contents (nth @requests 1)))
          "the second ask with the same id carries the first exchange")
      (is (= ["unrelated"] (user-contents (nth @requests 2))) "an ask without an id is stateless")
      (is (= (count (:messages second-r))
             (count ((:get (client/conversation-store c)) "muthu")))
          "the client's own store is what ask used"))))

(deftest a-host-store-is-called
  (let [calls (atom [])
        saved (atom {})
        store {:get (fn [id] (swap! calls conj [:get id]) (get @saved id))
               :save (fn [id msgs] (swap! calls conj [:save id]) (swap! saved assoc id msgs))}
        [http requests] (scripted (text-turn "one") (text-turn "two"))
        c (make-client http {:store store})]
    (client/ask c "first" {:id "u1"})
    (client/ask c "second" {:id "u1"})
    (is (= [[:get "u1"] [:save "u1"] [:get "u1"] [:save "u1"]] @calls))
    (is (= ["first" "second"] (user-contents (second @requests))))
    (is (identical? store (client/conversation-store c)))
    (testing "what the store throws ends the run, with it as the cause"
      (let [boom (ex-info "disk on fire" {})
            c (make-client http {:store {:get (fn [_] (throw boom)) :save (fn [_ _])}})
            e (is (thrown? clojure.lang.ExceptionInfo (client/ask c "x" {:id "u1"})))]
        (is (= :host (:kind (ex-data e))))
        (is (identical? boom (ex-cause e)))))))

(defn- halt-and-resume [store]
  (let [seen (atom [])
        tk (tool/toolkit [(deploy-tool seen)])
        [http requests] (scripted (calls-turn ["call_1" "deploy" {}]) (text-turn "Deployed.") (text-turn "again"))
        c (make-client http {:store store})
        halted (client/ask c "deploy it" {:toolkit tk :id "r1"})]
    (is (= "pending" (:status halted)))
    (is (= [{:id "r1" :request (:pending halted)}]
           (mapv #(dissoc % :since-ms) (memory/pending-runs store))))
    (is (pos-int? (:since-ms (first (memory/pending-runs store)))))
    (let [answer (client/answer-output "pnd-deploy" "now")
          done (client/ask-with-answer c tk "r1" nil answer)]
      (is (= "done" (:status done)))
      (is (= "deployed now" (:output (last (:tool-calls done)))))
      (is (empty? (memory/pending-runs store)))
      (let [e (is (thrown? clojure.lang.ExceptionInfo (client/ask-with-answer c tk "r1" (:pending halted) answer)))]
        (is (= :conflict (:kind (ex-data e))) "a second resume is a conflict"))
      (is (= 2 (count @requests)) "the second resume sent nothing")
      (is (= 2 (count @seen))))
    halted))

(deftest a-halted-ask-resumes-by-id-once
  (halt-and-resume (memory/in-memory-store)))

(deftest sqlite-keeps-conversations-across-handles
  (let [dir (doto (io/file (System/getProperty "java.io.tmpdir") (str "tn-clj-" (System/nanoTime))) (.mkdirs))
        path (str (io/file dir "conversations.db"))
        ;; deleted in the reverse order: the database's files, then the directory
        _ (doseq [f (cons dir (map #(io/file (str path %)) ["" "-wal" "-shm" "-journal" ".lock"]))] (.deleteOnExit ^java.io.File f))
        store (memory/sqlite-store path)
        halted (halt-and-resume store)
        again (memory/sqlite-store path)]
    (is (= path (:path again)))
    (is (< (count (:messages halted)) (count ((:get again) "r1"))) "a new handle reads the resumed run")
    ((:save store) "kept" [{:role "user" :content "hi"}])
    (is (= [{:role "user" :content "hi"}] ((:get again) "kept")))
    (is (nil? ((:get again) "nobody")))
    (testing "the client option :store takes the path"
      (let [[http requests] (scripted (text-turn "ok"))
            c (make-client http {:store path})]
        (client/ask c "more" {:id "kept"})
        (is (= ["hi" "more"] (user-contents (first @requests))))
        (is (= path (:path (client/conversation-store c))))))
    (let [e (is (thrown? clojure.lang.ExceptionInfo (memory/sqlite-store (str (io/file dir "no" "such" "x.db")))))]
      (is (= :store (:kind (ex-data e)))))))

(deftest postgres-keeps-a-halted-run-for-another-store
  ;; The server tests/postgres/with-postgres.sh started; under CI it must be there.
  (if-let [url (System/getenv "TN_POSTGRES_URL")]
    (let [store (memory/postgres-store url)
          halted (halt-and-resume store)
          again (memory/postgres-store url)]
      (is (< (count (:messages halted)) (count ((:get again) "r1"))) "another store reads the resumed run")
      (let [e (is (thrown? clojure.lang.ExceptionInfo (memory/postgres-store "postgres://u:pw@[bad")))]
        (is (= :invalid_argument (:kind (ex-data e))))
        (is (not (re-find #"pw" (ex-message e))))))
    (is (nil? (System/getenv "CI")) "TN_POSTGRES_URL is not set (run under tests/postgres/with-postgres.sh)")))
