(ns toolnexus.test-runner
  "Runs the binding's clojure.test namespaces (all, or those named on the command line) and
  ends with a machine-readable count line for test.sh: `TEST-COUNTS pass=N fail=M`."
  (:require [clojure.test :as t]))

(def default-namespaces
  '[toolnexus.vocabulary-test
    toolnexus.client-test
    toolnexus.memory-test
    toolnexus.options-test
    toolnexus.conformance-test
    toolnexus.sources-test
    toolnexus.translate-test
    toolnexus.content-test
    toolnexus.stream-test])

(defn -main [& args]
  (let [nss (if (seq args) (mapv symbol args) default-namespaces)]
    (apply require nss)
    (let [{:keys [test pass fail error]} (apply t/run-tests nss)]
      (println (format "clojure.test: %d tests, %d assertions passed, %d failed, %d errors"
                       test pass fail error))
      (println (format "TEST-COUNTS pass=%d fail=%d" pass (+ fail error)))
      (flush)
      (System/exit (if (zero? (+ fail error)) 0 1)))))
