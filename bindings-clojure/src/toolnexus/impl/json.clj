(ns ^:no-doc toolnexus.impl.json
  "JSON text <-> Clojure data at the ABI edge, in one place. Everything crosses libtoolnexus
  as JSON; the binding reads it with keyword keys (the Clojure port's convention: wire keys
  such as `:isError` or `:expiresAt` are the keywords themselves) and writes keywords back
  under their full name, so a key survives the round trip unchanged."
  (:require [clojure.data.json :as json]))

(defn- write-key
  "A map key as its JSON property name: a keyword's text without the colon (so a namespaced
  keyword keeps its namespace), anything else as `str`."
  [k]
  (if (keyword? k) (subs (str k) 1) (str k)))

(defn write-str
  "Clojure data as compact JSON text (UTF-8 characters kept as they are)."
  ^String [x]
  (json/write-str x :key-fn write-key :escape-unicode false :escape-slash false))

(defn read-str
  "JSON text as Clojure data with keyword keys; nil for nil."
  [^String s]
  (when s (json/read-str s :key-fn keyword)))

(defn read-str-raw
  "JSON text as Clojure data with string keys (for maps whose keys are data, not names)."
  [^String s]
  (when s (json/read-str s)))
