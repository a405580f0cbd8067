(ns toolnexus.tool
  "Tools and toolkits, as in the Clojure port: a tool is a plain map
  `{:name :description :input-schema :source :execute}` whose `:execute` returns a ToolResult
  `{:output :isError :metadata? :parts?}` (`:parts`: content parts, see `with-parts`); a toolkit is the set of tools one run may call.

  A toolkit also holds its libtoolnexus handle (under `:toolnexus.tool/native`), made when the
  toolkit is built and released when the map is no longer reachable: build toolkits with
  `toolkit`, not by hand."
  (:require [toolnexus.impl.convert :as convert]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.host :as host]
            [toolnexus.impl.json :as json]))

(defn sanitize
  "A tool name as the engine declares it to the model: every character outside
  `[a-zA-Z0-9_-]` becomes `_`. Asked of the engine itself, so the two can never disagree."
  [s]
  (ffi/call-string "tn_sanitize" (ffi/c-string (str s))))

(defn tool
  "A Tool from `{:name :description :input-schema :source :execute}`.

  `:execute` is called `(execute args)` on a first run and `(execute args ctx)` when the
  engine re-runs the tool with the answer to its own suspension, `ctx` being
  `{:answer :call-id :timeout-ms?}` (`:call-id` is the provider's tool-call id, the same on
  every run of one call), or when `execute` below is given a ctx. So, as in the Clojure port,
  a tool that suspends is written with both arities; one with only a 1-arity that is re-run
  with an answer gets an error result (the wrong number of arguments). It returns a
  ToolResult (`success`, `failure`, or a suspension from `toolnexus.client/suspend`); an
  exception it throws becomes an error result carrying the exception's message, and the run
  goes on.

  Defaults: `:description` \"\", `:input-schema` `{:type \"object\"}`, `:source` \"custom\".
  `:relay true` declares a relay tool instead: the model may call it, nothing runs here, and
  the calls reach the host as a `tool_call` Request (no `:execute`)."
  [{:keys [name description input-schema source execute relay]}]
  (when (nil? name)
    (throw (IllegalArgumentException. "toolnexus.tool/tool needs a :name")))
  (when-not (or relay (ifn? execute))
    (throw (IllegalArgumentException. (str "toolnexus.tool/tool " name " needs an :execute function"))))
  (cond-> {:name (str name)
           :description (or description "")
           :input-schema (or input-schema {:type "object"})
           :source (if source (clojure.core/name source) "custom")}
    relay (assoc :relay true)
    (not relay) (assoc :execute execute)))

(defn success
  "A successful ToolResult: `{:output (str output) :isError false}`, plus `:metadata` when
  given."
  ([output] (success output nil))
  ([output metadata]
   (cond-> {:output (str output) :isError false}
     metadata (assoc :metadata metadata))))

(defn failure
  "A failed ToolResult: `{:output (str output) :isError true}`, plus `:metadata` when given.
  The model sees it and may try again; it does not end the run."
  ([output] (failure output nil))
  ([output metadata]
   (cond-> {:output (str output) :isError true}
     metadata (assoc :metadata metadata))))

(defn with-parts
  "`result` carrying content `parts` (`toolnexus.content`) beside its text; none leaves it
  as it was."
  [result parts]
  (if (seq parts) (assoc result :parts (vec parts)) result))

(defn ^:no-doc declaration
  "How tool `t` is declared to the engine: an HTTP tool (`toolnexus.http/http-tool`) as
  `{:http spec}`, any other with `host-ref`, its index in the toolkit's tools."
  [host-ref t]
  (if-let [spec (:toolnexus.http/spec t)]
    {:http spec}
    (cond-> {:name (:name t)
           :description (:description t)
           :input_schema (:input-schema t)
           :host_ref host-ref}
    (:relay t) (assoc :relay true)
    (and (not (:relay t)) (:source t)) (assoc :source (:source t)))))

(defn- native-toolkit
  "The libtoolnexus toolkit for `tools`, each declared with its index as host_ref (the engine
  hands it back in every call, see host/on-tool), as a managed handle; the Clojure port's
  duplicate rule is the engine's `keep_last`: of tools sharing a name the later one wins, in
  the earlier one's place."
  [tools]
  (let [tools (vec tools)
        user-data (host/register! {:tools tools})
        spec {:tools (vec (map-indexed declaration tools)) :duplicates "keep_last"}
        p (try
            (ffi/call-handle "tn_toolkit_new" (ffi/c-string (json/write-str spec))
                             host/tool-callback user-data host/free-callback)
            (catch Exception e
              (host/unregister! user-data)
              (throw e)))]
    (ffi/handle "tn_toolkit_free" p)))

(defn ^:no-doc engine-tool
  "A Tool the engine runs itself (MCP, skill, built-in, HTTP), from its declaration: its
  `:execute` runs it on the engine toolkit `h`."
  [h {:keys [name description input_schema source]}]
  (let [run (fn [args ctx]
              (let [call (cond-> {:name name :args (or args {})}
                           (some? (:answer ctx)) (assoc :answer (:answer ctx))
                           (some? (:call-id ctx)) (assoc :call_id (str (:call-id ctx)))
                           (some? (:timeout-ms ctx)) (assoc :timeout_ms (long (:timeout-ms ctx))))]
                (try
                  (convert/wire->tool-result
                   (json/read-str (ffi/call-string "tn_toolkit_execute_call" (ffi/ptr h)
                                                   (ffi/c-string (json/write-str call)))))
                  (finally (ffi/keep-alive h)))))]
    {:name name :description (or description "") :input-schema input_schema :source source
     :execute (fn ([args] (run args nil)) ([args ctx] (run args ctx)))}))

(defn ^:no-doc kept-tools
  "The tools the engine kept, in its order, each with the name it declares: the host's own
  (read back by host_ref), or an `engine-tool` for one the engine made."
  [tools h]
  (let [kept (json/read-str (ffi/call-string "tn_toolkit_tools" (ffi/ptr h)))]
    (ffi/keep-alive h)
    (mapv (fn [d] (let [ref (:host_ref d)]
                    [(:name d) (if (integer? ref) (get (vec tools) ref) (engine-tool h d))]))
          kept)))

(defn toolkit
  "A toolkit: `{:tools {name -> Tool} :sources sources}` plus its engine handle. Tools are
  declared to the model in the order given; when two tools have the same (sanitized) name the
  later one wins, in the earlier one's place."
  ([tools] (toolkit tools {}))
  ([tools sources]
   (let [h (native-toolkit tools)]
     {:tools (into {} (kept-tools tools h))
      :sources sources
      ::native h})))

(defn ^:no-doc native
  "The engine handle of a toolkit (one is made for a hand-built `{:tools ...}` map)."
  [tk]
  (when tk
    (or (::native tk)
        (::native (toolkit (vals (:tools tk)) (:sources tk))))))

(defn execute
  "Runs the toolkit's tool `name` with `args` and returns its ToolResult, as the engine runs
  it in a run. An unknown name, or an exception from the tool, is an error result, never a
  throw.

  As in the Clojure port, the tool's arity follows `ctx`: without one (or with nil)
  `(execute args)` runs; with any other `ctx`, `{}` included, `(execute args ctx)` runs, the
  tool getting `{:call-id :answer? :timeout-ms?}` (`:call-id` from `ctx`, else \"\";
  `:answer` normalised as by `toolnexus.client/as-answer` when `ctx` has one, and then the
  tool runs as after its own suspension; `:timeout-ms` from `ctx` when given; other keys of
  `ctx` do not reach the tool). A tool with only a 1-arity called with a `ctx` gives an error
  result naming the wrong number of arguments, as any exception from a tool does. A
  malformed answer throws ex-info of kind `:invalid_argument`."
  ([tk name args] (execute tk name args nil))
  ([tk name args ctx]
   (let [h (native tk)
         ;; a ctx without an answer still selects the 2-arity: the call goes under a call id
         ;; of its own that the tool callback recognises (see host/direct-call!)
         direct-id (when ctx (host/direct-call! (if (some? (:call-id ctx)) (:call-id ctx) "")))
         call (cond-> {:name (str name) :args (or args {})}
                (some? (:answer ctx)) (assoc :answer (:answer ctx))
                direct-id (assoc :call_id direct-id)
                (some? (:timeout-ms ctx)) (assoc :timeout_ms (long (:timeout-ms ctx))))]
     (try
       (let [out (ffi/call-string "tn_toolkit_execute_call" (ffi/ptr h) (ffi/c-string (json/write-str call)))]
         (convert/wire->tool-result (json/read-str out)))
       (finally
         (when direct-id (host/forget-direct-call! direct-id))
         (ffi/keep-alive h))))))
