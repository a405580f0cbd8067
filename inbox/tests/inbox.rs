//! The inbox end to end over HTTP: runs parked by a real client against the loopback mock
//! model in a SQLite store, listed, answered and resumed through the page's forms.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{json, Value};
use support::mock::Mock;
use support::runs::{self, SECRET_KEY};
use support::{csrf_of, form, send, temp_dir};
use toolnexus::memory::{ConversationStore, StoreFuture};
use toolnexus::{Client, ClientOptions, Style};
use toolnexus_inbox::{serve, Inbox, InboxOptions};

const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");

struct Setup {
    inbox: Inbox,
    client: Client,
    _mock: Mock,
}

/// A mock model, a store with `parked` runs waiting, and an inbox over them.
async fn setup(name: &str, parked: &[(&str, Value)], opts: InboxOptions) -> Setup {
    let mock = Mock::start().await;
    let db = temp_dir(name).join("runs.db");
    let tk = runs::toolkit();
    let parker = runs::client(&mock.base_url(), &db);
    for (id, req) in parked {
        runs::park(&parker, &tk, id, req.clone()).await;
    }
    let inbox = serve(runs::client(&mock.base_url(), &db), Some(tk), opts).await.unwrap();
    Setup { inbox, client: parker, _mock: mock }
}

async fn get(addr: SocketAddr) -> support::Answer {
    send(addr, "GET", "/", &[], "").await
}

async fn post(addr: SocketAddr, body: &str) -> support::Answer {
    send(addr, "POST", "/answer", &[FORM], body).await
}

fn deploy() -> Value {
    json!({"id": "req-deploy", "kind": "approval", "prompt": "Deploy build 42 to production?",
           "url": "https://ci.example/builds/42", "data": {"build": 42, "env": "production"}})
}

#[tokio::test]
async fn a_pending_run_is_listed_and_approving_resumes_it() {
    let s = setup("approve", &[("deploy-1", deploy())], InboxOptions::default()).await;
    let addr = s.inbox.addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(s.inbox.url(), format!("http://{addr}/"));
    let page = get(addr).await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(page.header("content-security-policy").unwrap().contains("default-src 'none'"));
    for shown in [
        "1 run waiting in the sqlite store",
        "<span class=\"kind\">approval</span>",
        "Deploy build 42 to production?",
        "href=\"https://ci.example/builds/42\"",
        "&quot;env&quot;: &quot;production&quot;",
        "<code>deploy-1</code>",
        "<code>req-deploy</code>",
        "<dd class=\"age\">0 s</dd>",
    ] {
        assert!(page.body.contains(shown), "{shown} in {}", page.body);
    }
    assert!(!page.body.contains(SECRET_KEY));
    assert!(!page.body.contains("<script"), "the page runs no script");

    let csrf = csrf_of(&page.body);
    let body = form(&[("csrf", &csrf), ("conversation", "deploy-1"), ("request", "req-deploy"), ("action", "approve")]);
    let done = post(addr, &body).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("Status: <span class=\"status\">done</span>"), "{}", done.body);
    assert!(done.body.contains("Finished: gate passed with &quot;approved&quot;"), "{}", done.body);
    assert!(done.body.contains("Approved"));
    assert!(!done.body.contains(SECRET_KEY));
    assert!(s.client.conversation_store().pending_runs().await.unwrap().is_empty());
    assert!(get(addr).await.body.contains("Nothing is waiting for an answer."));

    // The same form again (a double submit, or the back button): refused, nothing re-run.
    let again = post(addr, &body).await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert!(again.body.contains("Already resumed"));
    s.inbox.shutdown().await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "shut down");
}

#[tokio::test]
async fn two_submits_at_once_resume_the_run_once() {
    let s = setup("double", &[("deploy-2", deploy())], InboxOptions::default()).await;
    let addr = s.inbox.addr();
    let csrf = csrf_of(&get(addr).await.body);
    let body = form(&[("csrf", &csrf), ("conversation", "deploy-2"), ("request", "req-deploy"), ("action", "approve")]);
    let (a, b) = tokio::join!(post(addr, &body), post(addr, &body));
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [200, 409], "{} / {}", a.body, b.body);
}

#[tokio::test]
async fn decline_with_a_reason_and_a_typed_answer_resume_their_runs() {
    let ask = json!({"id": "req-name", "kind": "input", "prompt": "Which colour?"});
    let s = setup("decline", &[("deploy-3", deploy()), ("colour", ask)], InboxOptions::default()).await;
    let addr = s.inbox.addr();
    let page = get(addr).await;
    assert!(page.body.contains("2 runs waiting"));
    let csrf = csrf_of(&page.body);

    let bad = form(&[
        ("csrf", &csrf),
        ("conversation", "deploy-3"),
        ("request", "req-deploy"),
        ("action", "decline"),
        ("reason", "because"),
    ]);
    assert_eq!(post(addr, &bad).await.status, 400, "a reason outside the vocabulary");
    let declined = post(
        addr,
        &form(&[
            ("csrf", &csrf),
            ("conversation", "deploy-3"),
            ("request", "req-deploy"),
            ("action", "decline"),
            ("reason", "cancelled"),
        ]),
    )
    .await;
    assert_eq!(declined.status, 200, "{}", declined.body);
    assert!(declined.body.contains("Declined (cancelled)"));
    assert!(declined.body.contains("Finished: declined/expired: Deploy build 42 to production?"), "{}", declined.body);

    let empty = form(&[("csrf", &csrf), ("conversation", "colour"), ("request", "req-name"), ("action", "answer")]);
    assert_eq!(post(addr, &empty).await.status, 400);
    let answered = post(
        addr,
        &form(&[
            ("csrf", &csrf),
            ("conversation", "colour"),
            ("request", "req-name"),
            ("action", "answer"),
            ("text", "blue & <green>"),
        ]),
    )
    .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert!(
        answered.body.contains("Finished: gate passed with &quot;blue &amp; &lt;green&gt;&quot;"),
        "{}",
        answered.body
    );
    assert!(s.client.conversation_store().pending_runs().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_run_that_halts_again_shows_its_next_request_and_a_failed_resume_its_error() {
    let ask = json!({"id": "req-1", "kind": "input", "prompt": "First question?"});
    let s = setup("again", &[("twice", ask), ("broken", deploy())], InboxOptions::default()).await;
    let addr = s.inbox.addr();
    let csrf = csrf_of(&get(addr).await.body);
    let next = r#"next:{"id": "req-2", "kind": "login", "prompt": "Sign in <now>", "url": "https://id.example/login"}"#;
    let body =
        form(&[("csrf", &csrf), ("conversation", "twice"), ("request", "req-1"), ("action", "answer"), ("text", next)]);
    let again = post(addr, &body).await;
    assert_eq!(again.status, 200, "{}", again.body);
    for shown in [
        "Status: <span class=\"status\">pending</span>",
        "The run is waiting again: <span class=\"kind\">login</span>",
        "Sign in &lt;now&gt;",
        "href=\"https://id.example/login\"",
        "<code>req-2</code>",
    ] {
        assert!(again.body.contains(shown), "{shown} in {}", again.body);
    }
    let listed = get(addr).await.body;
    assert!(listed.contains("<code>req-2</code>") && !listed.contains("<code>req-1</code>"), "{listed}");

    // The model fails the resume: the error is shown (no key in it), the run stays listed.
    let body = form(&[
        ("csrf", &csrf),
        ("conversation", "broken"),
        ("request", "req-deploy"),
        ("action", "answer"),
        ("text", "model-error"),
    ]);
    let failed = post(addr, &body).await;
    assert_eq!(failed.status, 502, "{}", failed.body);
    assert!(failed.body.contains("The resume failed"), "{}", failed.body);
    assert!(failed.body.contains("<span class=\"status\">http</span>"), "{}", failed.body);
    assert!(!failed.body.contains(SECRET_KEY));
    let listed = get(addr).await.body;
    assert!(listed.contains("<code>broken</code>"), "still waiting");
    assert!(listed.contains("An answer was accepted but the run did not finish resuming: ok, &quot;model-error&quot;."));
    assert_eq!(listed.matches("value=\"approve\"").count(), 1, "only the other run offers approve: {listed}");

    // Another answer is refused (the store holds the first); the same one, retried, resumes.
    let other = form(&[("csrf", &csrf), ("conversation", "broken"), ("request", "req-deploy"), ("action", "approve")]);
    assert_eq!(post(addr, &other).await.status, 409);
    let retry = form(&[("csrf", &csrf), ("conversation", "broken"), ("request", "req-deploy"), ("action", "retry")]);
    let done = post(addr, &retry).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("Resumed with the accepted answer: ok, &quot;model-error&quot;"), "{}", done.body);
    assert!(done.body.contains("Finished: gate passed with &quot;model-error&quot;"), "{}", done.body);
    assert_eq!(post(addr, &retry).await.status, 409, "nothing left to retry");
}

#[tokio::test]
async fn an_answer_to_a_request_the_run_is_not_waiting_on_is_a_conflict() {
    let s = setup("stale", &[("deploy-4", deploy())], InboxOptions::default()).await;
    let addr = s.inbox.addr();
    let csrf = csrf_of(&get(addr).await.body);
    let stale = form(&[("csrf", &csrf), ("conversation", "deploy-4"), ("request", "req-other"), ("action", "approve")]);
    assert_eq!(post(addr, &stale).await.status, 409);
    let nobody = form(&[("csrf", &csrf), ("conversation", "nobody"), ("request", "req-deploy"), ("action", "approve")]);
    assert_eq!(post(addr, &nobody).await.status, 409);
    assert_eq!(s.client.conversation_store().pending_runs().await.unwrap().len(), 1, "still waiting");
}

#[tokio::test]
async fn a_post_without_the_csrf_token_or_from_another_origin_is_refused() {
    let s = setup("csrf", &[("deploy-5", deploy())], InboxOptions::default()).await;
    let addr = s.inbox.addr();
    let csrf = csrf_of(&get(addr).await.body);
    let fields = [("conversation", "deploy-5"), ("request", "req-deploy"), ("action", "approve")];
    let missing = post(addr, &form(&fields)).await;
    assert_eq!(missing.status, 403, "{}", missing.body);
    let zeros = "0".repeat(64);
    let wrong: Vec<_> = [("csrf", zeros.as_str())].into_iter().chain(fields).collect();
    assert_eq!(post(addr, &form(&wrong)).await.status, 403);
    let right = form(&[[("csrf", csrf.as_str())].as_slice(), &fields].concat());
    let evil = send(addr, "POST", "/answer", &[FORM, ("Origin", "http://evil.example")], &right).await;
    assert_eq!(evil.status, 403);
    let opaque = send(addr, "POST", "/answer", &[FORM, ("Origin", "null")], &right).await;
    assert_eq!(opaque.status, 403, "a sandboxed or privacy-stripped origin is not ours");
    let cross = send(addr, "POST", "/answer", &[FORM, ("Sec-Fetch-Site", "cross-site")], &right).await;
    assert_eq!(cross.status, 403);
    let not_form = send(addr, "POST", "/answer", &[("Content-Type", "text/plain")], &right).await;
    assert_eq!(not_form.status, 415);
    assert_eq!(send(addr, "GET", "/answer?csrf=x", &[], "").await.status, 405, "GET changes nothing");
    assert_eq!(send(addr, "POST", "/", &[FORM], &right).await.status, 405);
    assert_eq!(send(addr, "GET", "/elsewhere", &[], "").await.status, 404);
    assert_eq!(s.client.conversation_store().pending_runs().await.unwrap().len(), 1, "nothing resumed");
    // Same origin, said explicitly as a browser does: accepted.
    let origin = format!("http://{addr}");
    let ok =
        send(addr, "POST", "/answer", &[FORM, ("Origin", &origin), ("Sec-Fetch-Site", "same-origin")], &right).await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn a_loopback_inbox_answers_to_loopback_host_names_only() {
    let s = setup("host", &[], InboxOptions::default()).await;
    let addr = s.inbox.addr();
    let rebound = send(addr, "GET", "/", &[("Host", &format!("evil.example:{}", addr.port()))], "").await;
    assert_eq!(rebound.status, 403);
    let named = send(addr, "GET", "/", &[("Host", &format!("localhost:{}", addr.port()))], "").await;
    assert_eq!(named.status, 200);
    assert!(named.body.contains("0 runs waiting"));
}

#[tokio::test]
async fn a_token_is_required_off_loopback_and_checked_on_every_request() {
    let token = "tok-0123456789abcdef-inbox";
    let any = InboxOptions { addr: "0.0.0.0:0".parse().unwrap(), token: None };
    let s = setup("token", &[("deploy-6", deploy())], InboxOptions::default()).await;
    let store_client = || runs::client("http://127.0.0.1:9/v1", &temp_dir("token2").join("runs.db"));
    let refused = serve(store_client(), None, any).await.err().unwrap();
    assert!(refused.message().contains("without a token"), "{}", refused.message());
    let short = InboxOptions { token: Some("short".into()), ..InboxOptions::default() };
    assert!(serve(store_client(), None, short).await.is_err());
    drop(s);

    let s = setup(
        "token3",
        &[("deploy-6", deploy())],
        InboxOptions { token: Some(token.into()), ..InboxOptions::default() },
    )
    .await;
    let addr = s.inbox.addr();
    assert_eq!(s.inbox.url(), format!("http://{addr}/?token={token}"));
    assert_eq!(get(addr).await.status, 401);
    assert_eq!(send(addr, "GET", "/?token=tok-0123456789abcdef-inboy", &[], "").await.status, 403);
    assert_eq!(send(addr, "GET", "/", &[("Authorization", "Bearer nope")], "").await.status, 403);
    let name = format!("toolnexus_inbox_{}", addr.port());
    let wrong_cookie = format!("{name}=tok-0123456789abcdef-inboy");
    assert_eq!(send(addr, "GET", "/", &[("Cookie", &wrong_cookie)], "").await.status, 403);

    let signed = send(addr, "GET", &format!("/?token={token}"), &[], "").await;
    assert_eq!(signed.status, 303);
    assert_eq!(signed.header("location"), Some("/"), "the token leaves the address bar");
    let cookie = signed.header("set-cookie").unwrap();
    assert_eq!(cookie, format!("{name}={token}; Path=/; HttpOnly; SameSite=Strict"));
    let jar = format!("other=1; {name}={token}");
    let page = send(addr, "GET", "/", &[("Cookie", &jar)], "").await;
    assert_eq!(page.status, 200);
    assert!(!page.body.contains(token), "the access token is not in the page");
    let bearer = format!("Bearer {token}");
    assert_eq!(send(addr, "GET", "/", &[("Authorization", &bearer)], "").await.status, 200);

    // A POST needs the token as well as the CSRF token.
    let csrf = csrf_of(&page.body);
    let body = form(&[("csrf", &csrf), ("conversation", "deploy-6"), ("request", "req-deploy"), ("action", "approve")]);
    assert_eq!(post(addr, &body).await.status, 401);
    let ok = send(addr, "POST", "/answer", &[FORM, ("Cookie", &jar)], &body).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
}

#[tokio::test]
async fn untrusted_request_text_is_shown_as_text() {
    let nasty = json!({"id": "req-x", "kind": "<b>kind</b>", "prompt": "<script>alert('prompt')</script>",
        "url": "javascript:alert(1)", "data": {"html": "</pre><script>alert(2)</script>"}});
    let s = setup("escape", &[("<img src=x onerror=alert(3)>", nasty)], InboxOptions::default()).await;
    let page = get(s.inbox.addr()).await;
    assert_eq!(page.status, 200);
    assert!(!page.body.contains("<script"), "{}", page.body);
    assert!(!page.body.contains("<img"), "{}", page.body);
    assert!(!page.body.contains("<b>"), "{}", page.body);
    assert!(!page.body.contains("href=\"javascript"), "{}", page.body);
    assert!(page.body.contains("&lt;script&gt;alert(&#39;prompt&#39;)&lt;/script&gt;"));
    assert!(page.body.contains("&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;"));
    assert!(page.body.contains("value=\"&lt;img src=x onerror=alert(3)&gt;\""));
}

/// A store with upstream's two methods only: it records no pending runs.
struct Plain;

impl ConversationStore for Plain {
    fn get<'a>(&'a self, _id: &'a str) -> StoreFuture<'a, Option<Vec<Value>>> {
        Box::pin(async { Ok(None) })
    }
    fn save<'a>(&'a self, _id: &'a str, _messages: Vec<Value>) -> StoreFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn a_store_that_records_no_pending_runs_is_refused() {
    let mut o = ClientOptions::new("http://127.0.0.1:9/v1", Style::OpenAi, "m");
    o.api_key = Some("k".into());
    o.store = Some(Arc::new(Plain));
    let e = serve(Client::new(o).unwrap(), None, InboxOptions::default()).await.err().unwrap();
    assert!(e.message().contains("records pending runs"), "{}", e.message());
}
