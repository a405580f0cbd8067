(ns ^:no-doc toolnexus.impl.error
  "The engine's error JSON as a Clojure exception, mapped once here. Every failure from
  libtoolnexus is an `ex-info` whose data carries the engine's stable error kind, so a caller
  can dispatch on `(:kind (ex-data e))` without matching messages."
  (:require [toolnexus.impl.json :as json]))

(defn kind
  "The engine's stable kind name (`\"http\"`, `\"answer_mismatch\"`, ...) as a keyword."
  [name]
  (keyword (str name)))

(defn ex
  "An ex-info for an engine error map `{:kind :code :message :status? :body? :retry_after?}`,
  with `cause` (a host's own exception) when there is one."
  ([err] (ex err nil))
  ([err cause]
   (let [data (cond-> {:kind (kind (:kind err)) :code (:code err)}
                (contains? err :status) (assoc :status (:status err))
                (contains? err :body) (assoc :body (:body err))
                (contains? err :retry_after) (assoc :retry-after (:retry_after err)))]
     (ex-info (str (:message err)) data cause))))

(defn from-json
  "The ex-info for the error JSON text `s` handed out by the library. `cause-of`, when given,
  maps the error (`{:kind :code :message :host_ref? ...}`) to its cause, or nil."
  ([s status] (from-json s status (constantly nil)))
  ([^String s status cause-of]
   (let [err (try (json/read-str s) (catch Exception _ nil))
         err (if (map? err)
               err
               {:kind "internal" :code status :message (str "libtoolnexus failed with status " status)})]
     (ex err (cause-of err)))))
