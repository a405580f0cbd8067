(ns toolnexus.memory
  "Conversation stores: where `toolnexus.client/ask` keeps each conversation by id, and where
  a halted run waits until `toolnexus.client/ask-with-answer` resumes it.

  A store is the Clojure port's two operations, a map `{:get (fn [id] messages-or-nil) :save
  (fn [id messages])}`: any such map works (the engine calls it). The engine's own stores,
  `in-memory-store` (a client's default) and `sqlite-store` (one file shared by the processes
  of a machine), are such maps too, and also record what a halted run waits on (see
  `pending-runs`) and hold a conversation while a run uses it: a second run of it, or a second
  answer to a request already answered, throws ex-info of kind `:conflict`."
  (:require [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.host :as host]
            [toolnexus.impl.json :as json]))

(defn- engine-store
  "The store map over engine store handle `h`: `:get` and `:save` read and write the engine's
  record (a `:save` drops a pending request the conversation had)."
  [h extra]
  (merge extra
         {:get (fn [id]
                 (try (json/read-str (ffi/call-string "tn_store_get" (ffi/ptr h) (ffi/c-string (str id))))
                      (finally (ffi/keep-alive h))))
          :save (fn [id messages]
                  (try (ffi/call "tn_store_save" (ffi/ptr h) (ffi/c-string (str id))
                                 (ffi/c-string (json/write-str (vec messages))))
                       nil
                       (finally (ffi/keep-alive h))))
          ::native h}))

(defn ^:no-doc of-handle
  "The store map over a store pointer the library handed out (freed once unreachable)."
  [p extra]
  (engine-store (ffi/handle "tn_store_free" p) extra))

(defn in-memory-store
  "A store of the engine's, in memory: conversations live as long as the store. Every client
  has one of its own unless given `:store` (see `toolnexus.client/conversation-store`)."
  []
  (of-handle (ffi/call-handle "tn_store_new_memory") {}))

(defn sqlite-store
  "A store of the engine's in the SQLite file at `path`, created when missing (\":memory:\" is a
  private database). Processes of one machine may share it: a run holds its conversation with
  a lock the system drops if the process dies. A file that cannot be opened throws ex-info of
  kind `:store`. The client option `:store` also takes the path itself."
  [path]
  (of-handle (ffi/call-handle "tn_store_open_sqlite" (ffi/c-string (str path))) {:path (str path)}))

(defn postgres-store
  "A store of the engine's in the PostgreSQL database at `url`
  (\"postgres://user:pass@host:port/db\"), connected on first use (a failure then throws ex-info
  of kind `:store`). Runs on many machines may share it: a run holds its conversation with a
  lock the database drops if the process dies. A URL that does not parse throws ex-info of
  kind `:invalid_argument`; no error repeats its password."
  [url]
  (of-handle (ffi/call-handle "tn_store_open_postgres" (ffi/c-string (str url))) {}))

(defn pending-runs
  "The conversations of an engine store waiting on a request, oldest first: `[{:id :request
  :since-ms}]` (`:request` the Request, `:since-ms` milliseconds since the epoch), enough to
  build an approvals queue on. A host store records no requests: the engine refuses one (kind
  `:invalid_argument`)."
  [store]
  (let [h (::native store)]
    (try (mapv (fn [r] {:id (:id r) :request (:request r) :since-ms (:since_ms r)})
               (json/read-str (ffi/call-string "tn_store_pending_runs" (ffi/ptr h))))
         (finally (ffi/keep-alive h)))))

(defn ^:no-doc with-native
  "Calls `(f pointer)` with a `tn_store` for `store`: an engine store's own, or a host store
  made over the map's `:get` and `:save` (freed after the call; a client made with it keeps
  it alive)."
  [store f]
  (if-let [h (::native store)]
    (try (f (ffi/ptr h)) (finally (ffi/keep-alive h)))
    (let [entry (select-keys store [:get :save])
          p (ffi/call-handle "tn_store_new_host" (host/store-callbacks-struct (host/register! entry)))]
      (try (f p) (finally (ffi/free-handle! "tn_store_free" p))))))
