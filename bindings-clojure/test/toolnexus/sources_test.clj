(ns toolnexus.sources-test
  "The tool sources through toolnexus.core/build: the built-ins on by default (and off), the
  skills prompt, a failed MCP server isolated, an HTTP tool, MCP serve."
  (:require [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [toolnexus.client :as client]
            [toolnexus.core :as core]
            [toolnexus.http :as http]
            [toolnexus.serve :as serve]
            [toolnexus.tool :as tool])
  (:import (com.sun.net.httpserver HttpHandler HttpServer)
           (java.net InetSocketAddress URI)
           (java.net.http HttpClient HttpRequest HttpRequest$BodyPublishers HttpResponse$BodyHandlers)
           (java.nio.file Files)
           (java.nio.file.attribute FileAttribute)))

(def ^:private repo (-> (java.io.File. (System/getProperty "user.dir")) .getCanonicalFile))

(defn- repo-path [rel]
  (let [conf (System/getenv "TOOLNEXUS_CONFORMANCE_DIR") ; <repo>/tests/conformance under test.sh
        here (cond conf (.getParentFile (.getParentFile (.getCanonicalFile (java.io.File. conf))))
                   (.exists (java.io.File. repo "core")) repo
                   :else (.getParentFile repo))]
    (str (java.io.File. here rel))))

(deftest builtins-default-on-and-off
  (let [tk (core/build {})]
    (is (= ["bash" "read" "write" "edit" "grep" "glob" "webfetch" "question" "apply_patch" "todowrite"]
           (core/tool-names tk)))
    (is (= "builtin" (:source (get-in tk [:tools "bash"]))) "each engine tool carries its source")
    (core/shutdown! tk))
  (is (empty? (:tools (core/build {:builtins false}))))
  (is (= 9 (count (:tools (core/build {:builtins {:tools {"bash" false}}})))))
  (let [root (str (Files/createTempDirectory "tn-clj" (make-array FileAttribute 0)))
        tk (core/build {:builtins {:root root} :disable-tools ["webfetch"]})]
    (is (= 9 (count (:tools tk))))
    (is (false? (:isError (core/execute tk "write" {:path "a.txt" :content "hi"}))))
    (is (str/includes? (:output ((:execute (get-in tk [:tools "read"])) {:path "a.txt"})) "hi"))
    (is (true? (:isError (core/execute tk "read" {:path "/etc/hostname"}))) "an escape is refused"))
  (testing "a value the engine cannot read is its error"
    (is (= :invalid_argument (try (core/build {:builtins "yes"}) nil
                                  (catch clojure.lang.ExceptionInfo e (:kind (ex-data e)))))))
  (testing "options the C ABI cannot carry are refused"
    (is (= :invalid_argument (try (core/build {:builtins false :agents [{:card "http://127.0.0.1:1/card"}]}) nil
                                  (catch clojure.lang.ExceptionInfo e (:kind (ex-data e))))))))

(deftest skills-prompt
  (let [tk (core/build {:builtins false
                        :skills (repo-path "core/tests/fixtures/skills")
                        :skill-defs [{:name "data-skill" :description "Given as data." :content "Do it."}]})]
    (is (= ["skill"] (core/tool-names tk)))
    (is (str/includes? (core/skills-prompt tk) "hello-world"))
    (is (str/includes? (core/skills-prompt tk) "data-skill"))
    (is (str/includes? (:output (core/execute tk "skill" {:name "hello-world"})) "# Hello World")))
  (is (= "" (core/skills-prompt (core/build {:builtins false})))))

(deftest skill-provider-composes-with-data-skills
  (let [calls (atom 0)
        tk (core/build {:builtins false
                        :skill-defs [{:name "data-skill" :description "Given as data." :content "Do it."}]
                        :skill-provider (fn []
                                          (swap! calls inc)
                                          [{:name "provided" :description "From the provider."
                                            :content "provided body" :resources ["notes.md"]}])})]
    (is (= 1 @calls))
    (is (str/includes? (core/skills-prompt tk) "data-skill"))
    (is (str/includes? (core/skills-prompt tk) "provided"))
    (is (str/includes? (:output (core/execute tk "skill" {:name "provided"})) "provided body"))
    (is (empty? (:warnings tk)))))

(deftest a-failing-skill-provider-is-a-warning
  (let [tk (core/build {:builtins false
                        :skill-defs [{:name "data-skill" :description "Given as data." :content "Do it."}]
                        :skill-provider (fn [] (throw (ex-info "boom" {})))})]
    (is (str/includes? (core/skills-prompt tk) "data-skill") "the other skill sources still load")
    (is (some #(str/includes? % "boom") (:warnings tk)))))

(deftest mcp-elicitation-through-wait-for
  ;; server-everything over stdio (tests/mcp's node_modules); skipped when it is not installed.
  (let [entry (repo-path "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        node? (try (zero? (.waitFor (.start (ProcessBuilder. ^java.util.List ["node" "--version"]))))
                   (catch Exception _ false))]
    (when (and node? (.exists (java.io.File. ^String entry)))
      (let [seen (atom [])
            tk (core/build {:builtins false
                            :mcp {"mcpServers" {"e" {"command" ["node" entry "stdio"]}}}
                            :wait-for (fn [request]
                                        (swap! seen conj request)
                                        (if (= "input" (:kind request))
                                          {:id (:id request) :ok true :data {:name "Ada"}}
                                          (client/answer-declined (:id request) "declined")))})]
        (try
          (is (str/includes? (:output (core/execute tk "e_trigger-elicitation-request" {})) "Ada"))
          (is (str/includes? (str/lower-case (:output (core/execute tk "e_trigger-url-elicitation"
                                                                    {:url "https://auth.example/x"})))
                             "decline"))
          (is (= ["input" "authorization"] (mapv :kind @seen)))
          (finally (core/close tk)))))))

(deftest failed-mcp-server-is-isolated
  (let [tk (core/build {:mcp {"mcpServers" {"broken" {"command" ["/nonexistent/tn-no-such-server"]}}}})]
    (is (= {"broken" "failed"} (:statuses tk) (core/mcp-status tk)))
    (is (some #(str/includes? % "broken") (:warnings tk)))
    (is (= 10 (count (:tools tk))) "the built-ins are still there")
    (core/close tk)
    (core/close tk)))

(deftest one-http-tool
  (let [srv (doto (HttpServer/create (InetSocketAddress. "127.0.0.1" 0) 0)
              (.createContext "/" (reify HttpHandler
                                    (handle [_ ex]
                                      (let [b (.getBytes (str (.getRequestMethod ex) " " (.getRequestURI ex)) "UTF-8")]
                                        (.sendResponseHeaders ex 200 (alength b))
                                        (doto (.getResponseBody ex) (.write b) (.close))))))
              (.start))
        url (str "http://127.0.0.1:" (.getPort (.getAddress srv)) "/items/{id}")
        t (http/http-tool {:name "lookup" :description "Looks up." :method :get :url url :query [:q]
                           :input-schema {:type "object" :properties {:id {:type "string"}}}})]
    (try
      (let [tk (core/build {:builtins false :tools [t]})]
        (is (= ["lookup"] (core/tool-names tk)))
        (is (= "GET /items/7?q=x" (:output (core/execute tk "lookup" {:id "7" :q "x"}))))
        (is (= "GET /items/8?q=y" (:output ((:execute t) {:id "8" :q "y"}))))
        (is (= ["lookup"] (keys (:tools (tool/toolkit [t]))))))
      (is (= :invalid_argument
             (try (core/build {:builtins false :tools [(http/http-tool {:name "x" :url url :method :get :body "xml"})]}) nil
                  (catch clojure.lang.ExceptionInfo e (:kind (ex-data e))))))
      (finally (.stop srv 0)))))

(deftest mcp-serve
  (let [tk (core/build {})
        h (serve/serve tk {:mcp {:token "s3cret"}})
        post (fn [headers]
               (let [b (reduce (fn [b [k v]] (.header b k v))
                               (-> (HttpRequest/newBuilder (URI. (:url h)))
                                   (.header "Content-Type" "application/json")
                                   (.header "Accept" "application/json, text/event-stream")
                                   (.POST (HttpRequest$BodyPublishers/ofString "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}")))
                               headers)]
                 (.statusCode (.send (HttpClient/newHttpClient) (.build b) (HttpResponse$BodyHandlers/discarding)))))]
    (try
      (is (not-any? #{"bash"} (:tools h)))
      (is (= 401 (post {})))
      (finally (serve/stop! h) (serve/stop! h)))))
