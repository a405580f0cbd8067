(ns toolnexus.options-test
  "The engine's tables as this binding uses them (error kinds and their codes, hooks and
  their bits: none copied here) and the client options the engine refuses: the shared cases
  of tests/options/bad-client-options.json, which the C and Go tests run too."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.host :as host]
            [toolnexus.impl.json :as json]))

(defn- cases-file
  "tests/options/bad-client-options.json, found beside the conformance scenarios (the
  `toolnexus.conformance.dir` property or TOOLNEXUS_CONFORMANCE_DIR), else from the working
  directory."
  ^java.io.File []
  (let [conformance (or (not-empty (System/getProperty "toolnexus.conformance.dir"))
                        (not-empty (System/getenv "TOOLNEXUS_CONFORMANCE_DIR")))]
    (if conformance
      (io/file conformance ".." "options" "bad-client-options.json")
      (first (filter #(.isFile ^java.io.File %) [(io/file "tests/options/bad-client-options.json")
                                                  (io/file "../tests/options/bad-client-options.json")])))))

(defn- clojure-options
  "The engine's option names as a Clojure user writes them: `base_url` -> `:base-url`."
  [m]
  (into {} (map (fn [[k v]] [(keyword (str/replace (name k) "_" "-")) v])) m))

(deftest the-shared-bad-options-are-invalid-arguments-naming-the-option
  (let [doc (json/read-str-raw (slurp (cases-file)))
        base (clojure-options (get doc "base"))]
    (is (seq (get doc "cases")))
    (doseq [{option "option" value "value"} (get doc "cases")]
      (testing (str option " " (pr-str value))
        (let [opts (merge base (clojure-options {option value}))
              e (is (thrown? clojure.lang.ExceptionInfo (client/create-client opts)))]
          (is (= :invalid_argument (:kind (ex-data e))))
          (is (= (ffi/status :invalid_argument) (:code (ex-data e))))
          (is (str/includes? (str (ex-message e)) option) (ex-message e)))))))

(deftest the-kinds-this-binding-documents-are-the-engines
  ;; toolnexus.client's namespace doc and the README list the kinds a caller dispatches on.
  (let [engine (ffi/error-kinds)]
    (is (= (map inc (range (count engine))) (map :code engine)) "codes 1.. in order, 0 is TN_OK")
    (is (= #{"invalid_argument" "config" "http" "network" "timeout" "cancelled" "protocol" "answer_mismatch"
             "host" "internal" "reentrant" "conflict" "store" "content_part" "unsupported_part"}
           (set (map :name engine))))
    (doseq [{:keys [name code]} engine]
      (is (= code (ffi/status (keyword name)))))
    (is (zero? ffi/ok))
    (is (thrown? IllegalArgumentException (ffi/status :no-such-kind)))))

(deftest hook-keys-and-bits-come-from-the-engine
  (let [table (ffi/engine-table "tn_hook_bits")]
    (is (= #{:before-llm :after-llm :before-tool :after-tool} (host/hook-keys)))
    (doseq [{:keys [name bit]} table]
      (is (= bit (host/hook-mask {(keyword (str/replace name "_" "-")) identity})) name))
    (is (= (reduce bit-or (map :bit table))
           (host/hook-mask {:before-llm identity :after-llm identity :before-tool identity :after-tool identity})))
    (is (zero? (host/hook-mask {:before-llm nil :no-such-hook identity})))))

(deftest the-engines-warnings-are-printed-on-err
  (let [err (java.io.StringWriter.)]
    (binding [*err* err]
      (client/create-client {:base-url "http://127.0.0.1:1/v1" :model "m" :request-params {:tools [] :seed 1}}))
    (is (str/includes? (str err) "WARNING: toolnexus: ") (str err))
    (is (str/includes? (str err) "\"tools\"") (str err))))
