(ns ^:no-doc toolnexus.impl.ffi
  "libtoolnexus through JNA: loading (with the ABI version check), calling an export, and the
  string and out-param conventions of include/toolnexus.h. Strings go in as NUL-terminated
  UTF-8 byte arrays (never through JNA's platform-default encoding); strings the library hands
  out are copied into Java strings and released with tn_string_free at once. No other
  namespace touches JNA functions or pointers."
  (:require [toolnexus.impl.error :as error]
            [toolnexus.impl.json :as json])
  (:import (com.sun.jna Function NativeLibrary Pointer)
           (com.sun.jna.ptr PointerByReference)
           (java.nio.charset StandardCharsets)
           (java.util Arrays)
           (java.util.concurrent ConcurrentHashMap)))

(def abi-version
  "The ABI version of include/toolnexus.h this binding was written for (`TN_ABI_VERSION`)."
  4)

(def ok
  "`TN_OK`: success, the one status that is no error kind (the ABI's convention: 0 is OK).
  Every other status is a kind's code in the engine's table, see `status`."
  0)

(defn- configured-path
  "An explicit library file: the `toolnexus.lib` system property, else `TOOLNEXUS_LIB`."
  []
  (or (not-empty (System/getProperty "toolnexus.lib"))
      (not-empty (System/getenv "TOOLNEXUS_LIB"))))

(defn- load-library ^NativeLibrary []
  (let [path (configured-path)
        ^NativeLibrary lib (try
              (NativeLibrary/getInstance (or path "toolnexus"))
              (catch UnsatisfiedLinkError e
                (throw (ex-info (str "toolnexus: cannot load libtoolnexus"
                                     (if path (str " from " path) " (searched jna.library.path, the system paths and the classpath, where the released jar has it)")
                                     ". Build it with `cargo build -p toolnexus-ffi` and point the "
                                     "`toolnexus.lib` system property, TOOLNEXUS_LIB, or jna.library.path at it: "
                                     (.getMessage e))
                                ;; no cause: a REPL or clojure.main shows the root cause only
                                {:kind :config}))))
        version (try
                  (.invokeInt (.getFunction lib "tn_abi_version") (object-array 0))
                  (catch UnsatisfiedLinkError e
                    (throw (ex-info (str "toolnexus: " (.getFile lib) " has no tn_abi_version: "
                                         "it is not libtoolnexus; rebuild libtoolnexus ("
                                         (.getMessage e) ")")
                                    {:kind :config}))))]
    (when (not= version abi-version)
      (throw (ex-info (str "toolnexus: " (.getFile lib) " implements C ABI version " version
                           ", but this binding was written for version " abi-version
                           ": rebuild libtoolnexus (cargo build -p toolnexus-ffi) from the same "
                           "checkout as the binding")
                      {:kind :config :abi version :expected abi-version})))
    lib))

(defonce ^:private library (delay (load-library)))

(defn lib
  "The loaded library (loaded and version-checked on first use)."
  ^NativeLibrary []
  @library)

(defonce ^:private ^ConcurrentHashMap functions (ConcurrentHashMap.))

(defn- function ^Function [^String fname]
  (or (.get functions fname)
      (let [f (.getFunction (lib) fname)]
        (.put functions fname f)
        f)))

(defn c-string
  "A Java string as NUL-terminated UTF-8 bytes for a `const char *` argument; nil stays NULL."
  ^bytes [^String s]
  (when (some? s)
    (let [b (.getBytes s StandardCharsets/UTF_8)]
      (Arrays/copyOf b (inc (alength b))))))

(defn read-string-at
  "The UTF-8 string at `p` (a `const char *` valid during a callback); nil for NULL."
  ^String [^Pointer p]
  (when p (.getString p 0 "UTF-8")))

(defn- take-string!
  "Copies out a string the library handed out and frees it."
  ^String [^Pointer p]
  (when p
    (try
      (.getString p 0 "UTF-8")
      (finally
        (.invoke (function "tn_string_free") Void/TYPE (object-array [p]))))))

(defn- invoke-status ^long [fname args]
  (.invokeInt (function fname) (object-array args)))

(defn call
  "Calls export `fname` with `args` followed by an error out-param; nil on TN_OK, else throws
  the library's error as ex-info."
  [fname & args]
  (let [err (PointerByReference.)
        status (invoke-status fname (concat args [err]))]
    (when-not (zero? status)
      (throw (error/from-json (take-string! (.getValue err)) status)))))

(defn- call-out
  "Calls export `fname` with `args` followed by an out-param and an error out-param; returns
  `[status out-pointer error-pointer]` (each pointer nil when not written)."
  [fname args]
  (let [out (PointerByReference.)
        err (PointerByReference.)
        status (invoke-status fname (concat args [out err]))]
    [status (.getValue out) (.getValue err)]))

(defn call-string
  "Calls export `fname` with `args` followed by a `char **` out-param and an error out-param;
  returns the out string, or throws the library's error as ex-info."
  ^String [fname & args]
  (let [[status out err] (call-out fname args)]
    (if (zero? status)
      (take-string! out)
      (throw (error/from-json (take-string! err) status)))))

(defn call-handle
  "Calls export `fname` with `args` followed by a handle out-param and an error out-param;
  returns the handle pointer, or throws the library's error as ex-info."
  ^Pointer [fname & args]
  (let [[status out err] (call-out fname args)]
    (if (zero? status)
      out
      (throw (error/from-json (take-string! err) status)))))

(defn call-result
  "Like `call-string`, but returns `[status text]` without throwing: the out string on TN_OK,
  the error JSON text otherwise."
  [fname & args]
  (let [[status out err] (call-out fname args)]
    [status (take-string! (if (zero? status) out err))]))

(defn free-handle!
  "Releases a handle with its `_free` export (`tn_client_free`, `tn_toolkit_free`)."
  [fname ^Pointer p]
  (.invoke (function fname) Void/TYPE (object-array [p])))

(defn complete!
  "Answers a callback's completion token; false when the token is no longer awaited (the
  run ended meanwhile), which is not an error for the host."
  [^long token ^long status ^String payload]
  (zero? (invoke-status "tn_complete"
                        [(Long/valueOf token) (Integer/valueOf (int status)) (c-string payload) nil])))

(defn complete-host-error!
  "Ends a callback's token with a host failure carrying `host-ref` (a number of the host's),
  which the run's error JSON names as `host_ref` when the failure ends the run; false when the
  token is no longer awaited."
  [^long token ^String message ^long host-ref]
  (zero? (invoke-status "tn_complete_host_error"
                        [(Long/valueOf token) (c-string message) (Long/valueOf host-ref) nil])))

(defn version
  "The library's version string."
  ^String []
  (.getString ^Pointer (.invokePointer (function "tn_version") (object-array 0)) 0 "UTF-8"))

(defn loaded-abi-version
  "The ABI version the loaded library reports."
  ^long []
  (.invokeInt (function "tn_abi_version") (object-array 0)))

;; ---------------------------------------------------------------------------------------------
;; the engine's tables

;; The header's TN_ERR_* and TN_HOOK_* are #defines, which JNA cannot read: the engine hands
;; the same tables out as JSON, and the binding keeps no copy of them.

(defn engine-table
  "One of the engine's tables (`tn_error_kinds`, `tn_hook_bits`) as data, keyword keys."
  [fname]
  (json/read-str (call-string fname)))

(defonce ^:private statuses
  (delay (into {} (map (juxt (comp keyword :name) :code)) (engine-table "tn_error_kinds"))))

(defn status
  "The status code of the engine's error kind `kind` (`:host`, `:network`, ...)."
  ^long [kind]
  (or (get @statuses kind)
      (throw (IllegalArgumentException. (str "toolnexus: the engine has no error kind " kind)))))

(defn error-kinds
  "The engine's error kinds, in code order: `[{:name :code :retryable}]`."
  []
  (engine-table "tn_error_kinds"))

;; ---------------------------------------------------------------------------------------------
;; handles

(deftype Handle [^Pointer ptr ^String free-fname])

(defonce ^:private ^java.lang.ref.Cleaner cleaner (java.lang.ref.Cleaner/create))

(defn handle
  "Wraps a library handle so that it is released (with export `free-fname`) once the wrapper
  is unreachable. A run in progress keeps what it uses alive inside the library, so a release
  during a run is safe; `with-handles` keeps the wrappers reachable across a call."
  ^Handle [^String free-fname ^Pointer p]
  (let [h (Handle. p free-fname)]
    (.register cleaner h (reify Runnable (run [_] (free-handle! free-fname p))))
    h))

(defn ptr
  "The raw pointer of a handle (nil for nil)."
  ^Pointer [^Handle h]
  (when h (.-ptr h)))

(defn keep-alive
  "Keeps `x` reachable up to this point (after a native call that used its pointer)."
  [x]
  (java.lang.ref.Reference/reachabilityFence x)
  nil)
