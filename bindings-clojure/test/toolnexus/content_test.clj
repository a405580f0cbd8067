(ns toolnexus.content-test
  "Content parts through the Clojure API: the port's constructors (made by the engine), a
  prompt of parts reaching a loopback model in both styles, a tool's parts, error parts, and
  the placeholder's warning printed once."
  (:require [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.content :as content]
            [toolnexus.core :as core]
            [toolnexus.impl.json :as json]
            [toolnexus.tool :as tool])
  (:import (com.sun.net.httpserver HttpExchange HttpHandler HttpServer)
           (java.io File)
           (java.net InetSocketAddress)
           (java.util Base64)))

(def ^:private golden
  "Upstream's 8x8 PNG fixture (examples/media/fixture.png), 82 bytes."
  "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAGUlEQVR42mP4z8AARwyrkBAVJZClkAEVJQBm3VpRJDtqMQAAAABJRU5ErkJggg==")

(defn- fixture-bytes ^bytes [] (.decode (Base64/getDecoder) ^String golden))

(defn- fixture
  "The fixture written as `name` in a fresh directory; its path."
  [name]
  (let [dir (doto (File/createTempFile "tn-parts" "") (.delete) (.mkdirs))
        f (File. dir ^String name)]
    (.deleteOnExit dir)
    (.deleteOnExit f)
    (with-open [o (java.io.FileOutputStream. f)] (.write o (fixture-bytes)))
    (.getPath f)))

(defn- with-model
  "Runs `(f base-url requests)` against a loopback model answering each request with the next
  of `replies` (JSON data), `requests` an atom of the bodies received."
  [replies f]
  (let [left (atom (vec replies))
        seen (atom [])
        srv (HttpServer/create (InetSocketAddress. "127.0.0.1" 0) 0)]
    (.createContext srv "/" (reify HttpHandler
                              (handle [_ ex]
                                (let [^HttpExchange ex ex
                                      body (slurp (.getRequestBody ex))
                                      [old _] (swap-vals! left #(vec (rest %)))
                                      out (.getBytes (json/write-str (or (first old) {:error "no reply left"})) "UTF-8")]
                                  (swap! seen conj (json/read-str body))
                                  (.add (.getResponseHeaders ex) "content-type" "application/json")
                                  (.sendResponseHeaders ex (if (first old) 200 599) (alength out))
                                  (with-open [o (.getResponseBody ex)] (.write o out))))))
    (.start srv)
    (try (f (str "http://127.0.0.1:" (.getPort (.getAddress srv))) seen)
         (finally (.stop srv 0)))))

(defn- openai-text [t] {:choices [{:message {:role "assistant" :content t}}]})

(defn- anthropic-text [t]
  {:role "assistant" :content [{:type "text" :text t}] :stop_reason "end_turn"
   :usage {:input_tokens 1 :output_tokens 1}})

(defn- user-content [body]
  (:content (first (filter #(= "user" (:role %)) (:messages body)))))

(deftest the-constructors-make-path-free-parts
  (let [path (fixture "fixture.png")
        p (content/from-file path)]
    (is (= {:type "image" :mimeType "image/png" :data golden :name "fixture.png"} p))
    (is (not (str/includes? (json/write-str p) path)) "a part never holds its path")
    (is (= p (content/attach path)))
    (is (= "image" (:type (content/image-file path))))
    (is (= {:type "image" :mimeType "image/png" :data golden} (content/from-bytes (fixture-bytes) "image/png")))
    (is (= golden (:data (content/from-bytes (vec (fixture-bytes)) "image/png"))) "a sequence of signed bytes")
    (is (= golden (:data (content/from-bytes (mapv #(bit-and % 255) (fixture-bytes)) "image/png")))
        "and of unsigned ones")
    (is (= "audio" (:type (content/from-bytes "ID3" "audio/ogg"))) "typed by the mime")
    (is (= {:type "image" :mimeType "image/png" :data golden}
           (content/from-data-url (str "data:image/png;base64," golden))))
    (is (= {:type "file" :mimeType "application/pdf" :url "https://x.test/a.pdf"}
           (content/from-url "https://x.test/a.pdf")))
    (is (= {:type "text" :text "hi"} (content/text-part "hi")))
    (is (= {:output "hi" :isError false} (tool/with-parts (tool/success "hi") [])))))

(deftest a-part-that-cannot-be-made-is-an-error-part
  (doseq [[p want] [[(content/from-file "/tmp/thing.heic") "unknown file extension \".heic\""]
                    [(content/from-file "/no/such/shot.png") "cannot read /no/such/shot.png"]
                    [(content/from-bytes (byte-array 1) nil) "mime_type is required"]
                    [(content/from-data-url "data:image/png,abc") "only base64 data: URLs are supported"]
                    [(content/from-bytes (Object.) "image/png") "unsupported byte source"]
                    [(content/from-bytes (fixture-bytes) "image/png" {:max-part-bytes 10})
                     "content part is 82 decoded bytes, over the maxPartBytes limit of 10"]]]
    (is (content/error-part? p) (pr-str p))
    (is (= "content_part" (:code p)))
    (is (str/includes? (str (:error p)) want) (pr-str p)))
  (with-model [(openai-text "never")]
    (fn [base seen]
      (let [c (client/create-client {:base-url base :model "m" :api-key "k"})
            e (try (client/run c [(content/text-part "hi") (content/from-file "/no/such.png")]) nil
                   (catch clojure.lang.ExceptionInfo e e))]
        (is (= :content_part (:kind (ex-data e))) (pr-str e))
        (is (empty? @seen) "nothing is sent")))))

(deftest what-the-port-asks-of-a-part-the-engine-answers
  (let [png {:type "image" :mimeType "image/png" :data golden}]
    (is (= png (content/validate-part png)))
    (is (= png (content/validate-part png 82)))
    (let [e (content/validate-part png 10)]
      (is (and (content/error-part? e) (= "content_part" (:code e))
               (str/includes? (:error e) "over the maxPartBytes limit of 10")) (pr-str e)))
    (is (str/includes? (:error (content/validate-part (assoc png :url "https://x.test/a.png"))) "both data and url"))
    (let [e (content/error-part "content_part" "made badly")]
      (is (= e (content/validate-part e)) "an error part passes through"))
    (is (= {:type "image" :mimeType "image/png" :bytes 82} (content/describe-part png)))
    (is (= {:type "text" :bytes 6} (content/describe-part (content/text-part "héllo"))))
    (is (= "image (image/png, 82 bytes)" (content/summarize-part png)))
    (is (= "héllo" (content/summarize-part (content/text-part "héllo"))))
    (is (= 82 (content/part-bytes png)))
    (is (= "[unsupported image part (image/png, 82 bytes)]" (content/unsupported-placeholder png)))
    (is (= {:type "image" :source {:type "base64" :media_type "image/png" :data golden}}
           (content/encode-part png "anthropic")))
    (is (= {:type "image_url" :image_url {:url (str "data:image/png;base64," golden)}} (content/encode-part png "openai")))
    (is (nil? (content/encode-part {:type "audio" :mimeType "audio/mpeg" :data "AA=="} "anthropic")))
    (is (= :invalid_argument (:kind (ex-data (is (thrown? clojure.lang.ExceptionInfo (content/encode-part png "gemini")))))))
    (is (content/error-part? (content/from-file "https://x.test/a.png")) "a path is read, never fetched")
    (is (content/error-part? (content/from-url "ftp://x.test/a.png")))))

(deftest a-prompt-of-parts-reaches-the-model-in-both-styles
  (let [path (fixture "fixture.png")]
    (with-model [(openai-text "seen")]
      (fn [base seen]
        (let [c (client/create-client {:base-url (str base "/v1") :model "m" :api-key "k"})
              r (client/run c [(content/text-part "before") (content/from-file path) "after"])]
          (is (= "seen" (:text r)))
          (is (= [{:type "text" :text "before"}
                  {:type "image_url" :image_url {:url (str "data:image/png;base64," golden)}}
                  {:type "text" :text "after"}]
                 (user-content (first @seen)))))))
    (with-model [(anthropic-text "seen") (anthropic-text "never")]
      (fn [base seen]
        (let [c (client/create-client {:base-url base :style "anthropic" :model "m" :api-key "k"})]
          (client/run c [(content/text-part "look") (content/from-file path)])
          (is (= [{:type "text" :text "look"}
                  {:type "image" :source {:type "base64" :media_type "image/png" :data golden}}]
                 (user-content (first @seen))))
          (testing "anthropic has no audio block: a prompt's audio is refused before any request"
            (let [e (try (client/run c [(content/from-bytes "ID3" "audio/mpeg")]) nil
                         (catch clojure.lang.ExceptionInfo e e))]
              (is (= :unsupported_part (:kind (ex-data e))))
              (is (= 1 (count @seen))))))))))

(defn- shot [nm]
  (tool/tool {:name nm :execute (fn [_] (tool/with-parts (tool/success (str nm " output"))
                                                          [(content/from-bytes (fixture-bytes) "image/png")]))}))

(defn- calls [& names]
  {:choices [{:message {:role "assistant" :content nil
                        :tool_calls (vec (map-indexed (fn [i n] {:id (str "c" (inc i)) :type "function"
                                                                 :function {:name n :arguments "{}"}})
                                                      names))}}]})

(deftest a-tools-parts-reach-the-model-and-come-back
  (with-model [(calls "shot_a") (openai-text "done")]
    (fn [base seen]
      (let [c (client/create-client {:base-url base :model "m" :api-key "k"})
            r (client/run c "go" {:toolkit (tool/toolkit [(shot "shot_a")])})
            moved (last (:messages (second @seen)))]
        (is (= "done" (:text r)))
        (is (= "user" (:role moved)))
        (is (= [{:type "text" :text "Output of tool shot_a (c1):"}
                {:type "image_url" :image_url {:url (str "data:image/png;base64," golden)}}]
               (:content moved))))))
  (testing "from the engine: read of a PNG answers its part"
    (let [path (fixture "fixture.png")
          r (core/execute (core/build {}) "read" {:path path})]
      (is (= [{:type "image" :mimeType "image/png" :data golden :name "fixture.png"}] (:parts r)) (pr-str r))
      (is (= (str path " (image/png, 82 bytes)") (:output r)))))
  (testing "a tool whose part could not be made gets an error result"
    (with-model [(calls "broken") (openai-text "ok")]
      (fn [base _]
        (let [c (client/create-client {:base-url base :model "m" :api-key "k"})
              broken (tool/tool {:name "broken"
                                 :execute (fn [_] (tool/with-parts (tool/success "here")
                                                                   [(content/from-file "/no/such/shot.png")]))})
              r (client/run c "go" {:toolkit (tool/toolkit [broken])})
              call (first (:tool-calls r))]
          (is (:isError call))
          (is (str/includes? (:output call) "cannot read /no/such/shot.png")))))))

(deftest a-placeholder-is-printed-once
  (with-model [(calls "shot_a" "shot_b") (openai-text "done")]
    (fn [base seen]
      (let [c (client/create-client {:base-url base :model "m" :api-key "k" :max-part-bytes 10})
            out (java.io.StringWriter.)
            root (.getRawRoot #'*out*)
            ;; The warning is printed on the library's thread, which sees *out*'s root.
            r (try (alter-var-root #'*out* (constantly out))
                   (client/run c "go" {:toolkit (tool/toolkit [(shot "shot_a") (shot "shot_b")])})
                   (finally (alter-var-root #'*out* (constantly root))))
            printed (str out)
            sent (json/write-str (second @seen))]
        (is (= "done" (:text r)))
        (is (= 2 (count (re-seq #"\[unsupported image part \(image/png, 82 bytes\)\]" sent))))
        (is (not (str/includes? sent golden)))
        (is (= 1 (count (re-seq #"\[toolnexus\]" printed))) printed)
        (is (str/includes? printed "over the maxPartBytes limit of 10 — sent as a text placeholder"))))))
