(ns toolnexus.content
  "Content parts (SPEC §1B) with the Clojure port's names: a part is a map `{:type :text?
  :mimeType? :data? :url? :name?}` (`:type` \"text\", \"image\", \"file\" or \"audio\"; any but
  text carries `:mimeType` and exactly one of `:data`, standard base64, or `:url`). A part never
  holds a path: the constructors read the file when they are called.

  Every constructor has the engine make the part (`tn_part_build`: the extension table, the
  base64, a `data:` URL read, the size limit); none throws. A part that cannot be made is an
  error part, `{:type \"error\" :code \"content_part\" :error message}`, as in the port;
  `toolnexus.client/run` throws it before anything is sent, and a tool whose result carries
  one gets an error result. A part is typed by its MIME type (`image/*` an image, `audio/*`
  audio, anything else a file), but for `image-file`."
  (:require [toolnexus.impl.error :as error]
            [toolnexus.impl.ffi :as ffi]
            [toolnexus.impl.json :as json]))

(defn error-part
  "A part that could not be made, as data: `{:type \"error\" :code :error}`."
  [code message]
  {:type "error" :code (str code) :error (str message)})

(defn error-part?
  "Whether `x` is an error part."
  [x]
  (and (map? x) (= "error" (:type x))))

(defn text-part
  "A text part."
  [s]
  {:type "text" :text (str s)})

(defn- build
  "The part the engine makes of `spec` (`{:source? :file_name? :type? :mime_type? :name?
  :max_part_bytes?}`) and `bs` (the content when there is no `:source`), or an error part."
  [spec ^bytes bs]
  (try
    (json/read-str (ffi/call-string "tn_part_build" (ffi/c-string (json/write-str (into {} (remove (comp nil? val)) spec)))
                                    bs (long (if bs (alength bs) 0))))
    (catch clojure.lang.ExceptionInfo e
      (error-part (name (:kind (ex-data e))) (ex-message e)))))

(defn- spec
  "The engine's spec keys of the port's opts (`:mimeType`, `:name`, `:max-part-bytes`)."
  [opts]
  {:mime_type (:mimeType opts) :name (:name opts) :max_part_bytes (:max-part-bytes opts)})

(defn- byte-source
  "`x` as a byte array: a byte array as is, a string as its UTF-8 bytes, a sequence of byte
  values (signed or unsigned) as those bytes; nil for anything else."
  ^bytes [x]
  (cond
    (bytes? x) x
    (string? x) (.getBytes ^String x "UTF-8")
    (sequential? x) (try (byte-array (map #(unchecked-byte (bit-and (long %) 255)) x))
                         (catch Exception _ nil))
    :else nil))

(defn from-bytes
  "A part of bytes in hand: a byte array, a string (its UTF-8 bytes) or a sequence of byte
  values, with `mime` (required). `opts`: `:name`, `:max-part-bytes` (decoded bytes)."
  ([bs mime] (from-bytes bs mime {}))
  ([bs mime opts]
   (if-let [b (byte-source bs)]
     (build (assoc (spec opts) :mime_type (some-> mime str)) b)
     (error-part "content_part" (str "unsupported byte source: " (if (nil? bs) "nil" (pr-str (type bs)))
                                     " — pass a path string, a byte array, or a sequence of byte values")))))

(defn from-file
  "A part of the file at `path`, read now: its MIME type from the extension (png, jpg, jpeg,
  gif, webp, pdf, mp3, wav) or `:mimeType` in `opts`, its `:name` the file's base name or
  `:name`. `opts` also takes `:max-part-bytes`."
  ([path] (from-file path {}))
  ([path opts] (build (assoc (spec opts) :path (str path)) nil)))

(defn image-file
  "`from-file` made an `image` part whatever the file's type."
  ([path] (image-file path {}))
  ([path opts] (build (assoc (spec opts) :path (str path) :type "image") nil)))

(defn from-data-url
  "A part of a `data:<mime>;base64,<data>` URL: its `:mimeType` (or `:mimeType` in `opts`)
  and `:data`, never a `:url`. A URL that is not base64 is an error part."
  ([u] (from-data-url u {}))
  ([u opts] (build (assoc (spec opts) :url (str u)) nil)))

(defn from-url
  "A part of an `http(s)://` URL, kept as `:url`; its MIME type `:mimeType` in `opts`, else its
  extension's. A `data:` URL is read as `from-data-url` reads it; any other is an error part."
  ([u] (from-url u {}))
  ([u opts] (build (assoc (spec opts) :url (str u)) nil)))

(defn attach
  "A part of whatever is at hand: a string is a `data:` URL, an `http(s)://` URL or a path (by
  its shape); anything else is bytes, as `from-bytes` takes them, with `:mimeType` in `opts`."
  ([source] (attach source {}))
  ([source opts]
   (if (string? source)
     (build (assoc (spec opts) :source source) nil)
     (from-bytes source (:mimeType opts) opts))))

(defn- part-json
  "`part` as the engine's JSON."
  [part]
  (ffi/c-string (json/write-str part)))

(defn validate-part
  "`part` itself when it is a valid part (a `:mimeType` and exactly one of `:data` and `:url`,
  and no more than `max-part-bytes` decoded bytes when that is given), else an error part
  saying why; an error part is returned as it is. Never throws."
  ([part] (validate-part part nil))
  ([part max-part-bytes]
   (if (error-part? part)
     part
     (try
       (ffi/call "tn_part_validate" (part-json part) (long (if max-part-bytes max-part-bytes -1)))
       part
       (catch clojure.lang.ExceptionInfo e
         (error-part (name (:kind (ex-data e))) (ex-message e)))))))

(defn- inspect
  "What the engine says of `part` (`tn_part_inspect`), never its data."
  [part]
  (json/read-str (ffi/call-string "tn_part_inspect" (part-json part))))

(defn describe-part
  "What a log line may show of a part, never its data: `{:type :mimeType :bytes}` (a text
  part `{:type :bytes}`, its text's UTF-8 length)."
  [part]
  (:view (inspect part)))

(defn summarize-part
  "A part on one line: a text part's text, any other `<type> (<mimeType>, <bytes> bytes)`."
  [part]
  (:line (inspect part)))

(defn part-bytes
  "The decoded bytes a part carries (0 for a text or URL part)."
  [part]
  (:bytes (inspect part)))

(defn unsupported-placeholder
  "What a model is sent in place of a part its provider cannot take:
  `[unsupported <type> part (<mimeType>, <bytes> bytes)]`."
  [part]
  (:placeholder (inspect part)))

(defn encode-part
  "`part` as the provider block of `style` (\"openai\" or \"anthropic\"), or nil when that
  provider has no block for it (Anthropic and audio; OpenAI and a file or audio by URL)."
  [part style]
  (let [[status text] (ffi/call-result "tn_part_encode" (part-json part) (ffi/c-string (str style)))]
    (cond
      (zero? status) (json/read-str text)
      (= status (ffi/status :unsupported_part)) nil
      :else (throw (error/from-json text status)))))

(defn ^:no-doc first-error
  "The first error part of `parts`, or nil."
  [parts]
  (when (sequential? parts) (first (filter error-part? parts))))
