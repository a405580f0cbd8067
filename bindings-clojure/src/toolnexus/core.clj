(ns toolnexus.core
  "The Clojure port's `toolnexus.core`: one call builds a toolkit from every tool source (MCP
  servers, skills, the built-in tools, your own tools), over libtoolnexus's
  `tn_toolkit_create_with`. Every default, check and precedence is the engine's: this namespace only
  converts the port's options to the engine's JSON and back."
  (:require [toolnexus.impl.error :as error]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.host :as host]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool]))

(def ^:private unsupported
  {:agents "remote A2A agents"})

(defn- refuse-unsupported [opts]
  (doseq [[k why] unsupported]
    (when (some? (get opts k))
      (throw (error/ex {:kind "invalid_argument" :code (ffi/status :invalid_argument)
                        :message (str "toolkit option " k " (" why ") is not supported by this binding yet")})))))

(defn- names [xs] (mapv #(if (keyword? %) (name %) (str %)) xs))

(defn- name-map [m] (into {} (map (fn [[k v]] [(if (keyword? k) (name k) (str k)) v])) m))

(defn- spec
  "The port's build options as the engine's toolkit options (but :tools)."
  [{:keys [mcp skills skill-defs skills-filter skill-sample-limit disable-skills builtins disable-tools]}]
  (let [skills (cond (nil? skills) nil (or (string? skills) (map? skills)) [skills] :else (vec skills))
        dirs (filterv (complement map?) skills)
        defs (into (filterv map? skills) skill-defs)]
    (cond-> {:duplicates "keep_last"}
      (some? mcp) (assoc :mcp_config mcp)
      (seq dirs) (assoc :skills_dir (mapv str dirs))
      (seq defs) (assoc :skills (vec defs))
      (some? skills-filter) (assoc :skills_filter (name-map skills-filter))
      (some? skill-sample-limit) (assoc :skill_sample_limit skill-sample-limit)
      (seq disable-skills) (assoc :disable_skills (names disable-skills))
      (some? builtins) (assoc :builtins builtins)
      (seq disable-tools) (assoc :disable_tools (names disable-tools)))))

(defn- toolkit-map
  "The toolkit map over handle `h` of a toolkit made from `host-tools` (declared with their
  index as host_ref)."
  [h host-tools]
  (let [p (ffi/ptr h)
        kept (tool/kept-tools host-tools h)
        warnings (mapv :message (json/read-str (ffi/call-string "tn_toolkit_warnings" p)))
        statuses (json/read-str-raw (ffi/call-string "tn_toolkit_mcp_status" p))]
    (ffi/keep-alive h)
    {:tools (into {} kept)
     :order (mapv first kept)
     :statuses statuses
     :warnings warnings
     ::tool/native h}))

(defn build
  "Builds a toolkit from every configured source (the Clojure port's `build`).

  opts:
    :mcp                 the MCP servers: a config map, or the path of a JSON config file
    :skills              a skills root, a seq of roots, or a seq of skill defs
    :skill-defs          skills as data: `[{:name :description :content :resources? :base?}]`
    :skill-provider      `(fn [] skill-defs)`, called once while the toolkit is built; what it
                         throws becomes a warning and the other skill sources still load
    :skills-filter       name -> bool allowlist (or drop-list) over the skill catalog
    :skill-sample-limit  the skill tool's file sample (0: the engine's default, -1: none)
    :disable-skills      names dropped from the catalog
    :builtins            the built-in tools: absent (on, all ten), false, or a map
                         {:enabled :disabled :tools {name bool} :root :base_dir ...}
    :tools               your own Tools (`toolnexus.tool/tool`, `toolnexus.http/http-tool`)
    :disable-tools       final tool names dropped, across every source
    :wait-for            `(fn [request] answer-or-nil)`: answers the MCP servers' elicitations
                         (a form is a request of kind \"input\", a URL one of kind
                         \"authorization\"; nil is no answer). Absent: servers are told this client
                         cannot answer them

  The engine orders the tools (MCP, skill, built-ins, yours; one of yours named like a built-in
  replaces it) and checks every option (a bad one throws ex-info of kind :invalid_argument). A
  server that fails is isolated: `:statuses` (server name -> \"connected\" | \"disabled\" |
  \"failed\") says so and `:warnings` says why. Blocks while the servers start; they run until
  `shutdown!`, or until the toolkit is unreachable and no run uses it.
  :agents is not in the C ABI yet: set, it is refused.

  Returns `{:tools {name -> Tool} :order [names] :statuses :warnings}` plus the engine handle.
  A Tool the engine runs itself has the engine's `:source` (\"mcp\", \"skill\", \"builtin\",
  \"http\") and an `:execute` that runs it in the engine."
  [opts]
  (refuse-unsupported opts)
  (let [host-tools (vec (:tools opts))
        entry (assoc (select-keys opts [:wait-for :skill-provider]) :tools host-tools)
        user-data (host/register! entry)
        callbacks (host/toolkit-callbacks-struct user-data entry)
        payload (assoc (spec opts) :tools (vec (map-indexed tool/declaration host-tools)))
        p (try
            (ffi/call-handle "tn_toolkit_create_with" (ffi/c-string (json/write-str payload)) callbacks nil)
            (catch Exception e
              (host/unregister! user-data)
              (throw e)))]
    (toolkit-map (ffi/handle "tn_toolkit_free" p) host-tools)))

(defn shutdown!
  "Stops every MCP server the toolkit started; their tools answer with an error from then on.
  Idempotent. Returns the toolkit."
  [tk]
  (when-let [h (::tool/native tk)]
    (ffi/call "tn_toolkit_close" (ffi/ptr h))
    (ffi/keep-alive h))
  tk)

(def ^{:arglists '([tk])} close "Alias of `shutdown!`." shutdown!)

(defn skills-prompt
  "The skill catalog for the system prompt (\"\" without skills). A run already appends it."
  [tk]
  (let [h (tool/native tk)]
    (try (ffi/call-string "tn_toolkit_skills_prompt" (ffi/ptr h))
         (finally (ffi/keep-alive h)))))

(defn mcp-status
  "Each configured MCP server's status, now: name -> \"connected\" | \"disabled\" | \"failed\"."
  [tk]
  (let [h (tool/native tk)]
    (try (json/read-str-raw (ffi/call-string "tn_toolkit_mcp_status" (ffi/ptr h)))
         (finally (ffi/keep-alive h)))))

(defn tool-names "The toolkit's tool names, in order." [tk] (or (:order tk) (vec (keys (:tools tk)))))

(defn execute
  "Runs a tool by name (see `toolnexus.tool/execute`)."
  ([tk name args] (tool/execute tk name args))
  ([tk name args ctx] (tool/execute tk name args ctx)))
