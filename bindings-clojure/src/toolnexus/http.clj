(ns toolnexus.http
  "The Clojure port's `http-tool`: a remote endpoint as a Tool the engine calls itself (an HTTP
  tool of libtoolnexus). The engine checks the spec and applies its defaults."
  (:require [toolnexus.impl.json :as json]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.tool :as tool]))

(defn- text [x] (if (keyword? x) (name x) (str x)))

(defn- wire
  "The port's options as the engine's HTTP tool spec."
  [{:keys [description input-schema method url headers query body timeout-ms result-mode] :as opts}]
  (cond-> {:name (some-> (:name opts) text) :description (or description "") :url url}
    (some? method) (assoc :method (text method))
    (some? headers) (assoc :headers (into {} (map (fn [[k v]] [(text k) (str v)])) headers))
    (some? query) (assoc :query (mapv text query))
    (some? body) (assoc :body (text body))
    (some? input-schema) (assoc :input_schema input-schema)
    (some? timeout-ms) (assoc :timeout_ms timeout-ms)
    (some? result-mode) (assoc :result_mode (text result-mode))))

(defn http-tool
  "Declares a remote endpoint as a Tool (source \"http\"):

      (http-tool {:name \"getUser\" :description \"Fetch a user\" :input-schema {:type \"object\"}
                  :method :get :url \"https://api.example.com/users/{id}\"
                  :headers {\"authorization\" \"Bearer ${API_TOKEN}\"} :query [:verbose]
                  :body \"json\" :timeout-ms 30000 :result-mode \"text\"})

  In a toolkit (`toolnexus.tool/toolkit`, `toolnexus.core/build`) the engine runs it; its
  `:execute`, called directly, runs it through an engine toolkit of that one tool (made on
  first use). The engine checks the spec: a bad one throws ex-info of kind :invalid_argument
  when the toolkit is made."
  [opts]
  (let [spec (wire opts)
        decl {:name (:name spec) :description (:description spec) :input-schema (:input_schema spec)
              :source "http" ::spec spec}
        alone (delay (tool/toolkit [decl]))
        run (fn [args ctx] (tool/execute @alone (:name spec) args ctx))]
    (assoc decl :execute (fn ([args] (run args nil)) ([args ctx] (run args ctx))))))
