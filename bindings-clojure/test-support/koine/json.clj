(ns koine.json
  "Test-only stand-in for the `koine.json` namespace the seed examples require (another
  library's JSON namespace; they use only `write-str`). Not part of the toolnexus library, and
  not on run-example's classpath: test.sh adds test-support/ for the seed runs only, through
  TOOLNEXUS_EXTRA_CLASSPATH."
  (:require [clojure.data.json :as json]))

(defn write-str
  "Clojure data as JSON text, keyword keys and values written under their name."
  [x]
  (json/write-str x :escape-slash false))

(defn read-str
  "JSON text as Clojure data with keyword keys."
  [s]
  (json/read-str s :key-fn keyword))
