//! The HTTP side: hyper's HTTP/1 server, two routes (`GET /` the list, `POST /answer` a
//! resume), and the checks every request passes first (Host, token, then for a POST the
//! origin, the form's type and size, and its CSRF token).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, COOKIE, HOST, LOCATION, ORIGIN, SET_COOKIE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolnexus::{answer_approved, answer_declined, answer_output, Client, ErrorKind, Reason, Toolkit};

use crate::{auth, page};

/// The largest form body read; the inbox's forms are a few hundred bytes.
const MAX_FORM_BYTES: usize = 64 * 1024;

/// How long a connection may take to send a request's head: an idle or trickling client
/// does not hold a connection open for ever.
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Everything a request handler needs.
pub(crate) struct State {
    client: Client,
    toolkit: Option<Toolkit>,
    bound: SocketAddr,
    token: Option<String>,
    csrf: String,
}

impl State {
    pub(crate) fn new(
        client: Client,
        toolkit: Option<Toolkit>,
        bound: SocketAddr,
        token: Option<String>,
        csrf: String,
    ) -> State {
        State { client, toolkit, bound, token, csrf }
    }
}

/// Accepts connections until `cancel`; each connection is tracked so shutdown can wait.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    state: Arc<State>,
    cancel: CancellationToken,
    tracker: TaskTracker,
) {
    loop {
        let stream = tokio::select! {
            _ = cancel.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A failed accept (out of descriptors, a reset) concerns that connection only.
                Err(_) => continue,
            },
        };
        let (state, cancel) = (state.clone(), cancel.clone());
        tracker.spawn(async move {
            let svc = service_fn(move |req| handle(state.clone(), req));
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = cancel.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
}

type Reply = Response<Full<Bytes>>;

fn html(status: StatusCode, body: String) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    // No script runs on these pages at all; forms post to this server only.
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    // Not `no-referrer`: under it a browser sends `Origin: null` with the page's own forms,
    // which the origin check must refuse. Nothing leaves for another site either way.
    h.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    h.insert("cache-control", HeaderValue::from_static("no-store"));
    r
}

fn refuse(status: StatusCode, title: &str, text: &str) -> Reply {
    html(status, page::message(title, text))
}

fn header(req: &Request<Incoming>, name: impl hyper::header::AsHeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The token a request carries, and whether it came in the query (to be moved to a cookie).
fn presented(req: &Request<Incoming>, bound: SocketAddr) -> (Option<&str>, bool) {
    if let Some(t) = auth::bearer(header(req, AUTHORIZATION)) {
        return (Some(t), false);
    }
    let query = req.uri().query().and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")));
    if let Some(t) = query {
        return (Some(t), true);
    }
    (auth::cookie(header(req, COOKIE), &auth::cookie_name(bound)), false)
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    Ok(route(&state, req).await)
}

async fn route(state: &State, req: Request<Incoming>) -> Reply {
    let Some(host) = header(&req, HOST).filter(|h| auth::host_allowed(Some(h), state.bound)).map(str::to_string) else {
        return refuse(StatusCode::FORBIDDEN, "Unexpected host", "This inbox answers to its own address only.");
    };
    if let Some(expected) = &state.token {
        match presented(&req, state.bound) {
            (None, _) => {
                return refuse(StatusCode::UNAUTHORIZED, "Token required", "Open the inbox with the link it printed.")
            }
            (Some(t), _) if !auth::same(t.as_bytes(), expected.as_bytes()) => {
                return refuse(StatusCode::FORBIDDEN, "Wrong token", "This token does not open this inbox.")
            }
            // Trade the token in the URL for a cookie, and drop it from the address bar.
            (Some(_), true) if req.method() == Method::GET => {
                let mut r = html(StatusCode::SEE_OTHER, page::message("Signed in", "Continue to the inbox."));
                let path = req.uri().path().to_string();
                if let (Ok(cookie), Ok(to)) =
                    (HeaderValue::from_str(&auth::set_cookie(state.bound, expected)), HeaderValue::from_str(&path))
                {
                    r.headers_mut().insert(SET_COOKIE, cookie);
                    r.headers_mut().insert(LOCATION, to);
                }
                return r;
            }
            _ => {}
        }
    }
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/") | (&Method::HEAD, "/") => list(state).await,
        (&Method::POST, "/answer") => answer(state, req, &host).await,
        (_, "/") | (_, "/answer") => {
            refuse(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed", "Use the page's forms.")
        }
        _ => refuse(StatusCode::NOT_FOUND, "Not found", "The inbox has one page: /."),
    }
}

async fn list(state: &State) -> Reply {
    let store = state.client.conversation_store();
    let read = async {
        let runs = store.pending_runs().await?;
        let mut accepted = Vec::with_capacity(runs.len());
        for run in &runs {
            accepted.push(store.load(&run.id).await?.and_then(|r| r.answer));
        }
        Ok::<_, toolnexus::Error>((runs, accepted))
    };
    match read.await {
        Ok((runs, accepted)) => {
            html(StatusCode::OK, page::inbox(&runs, &accepted, now_ms(), &state.csrf, store.kind()))
        }
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "The store cannot be read", e.message()),
    }
}

/// The answer a resume accepted and did not finish with, when it answers `request`.
async fn accepted_answer(state: &State, conversation: &str, request: &str) -> Option<toolnexus::Answer> {
    let stored = state.client.conversation_store().load(conversation).await.ok()??;
    stored.answer.filter(|a| a.id == request)
}

/// The fields of an answer form.
#[derive(Default)]
struct Form {
    csrf: String,
    conversation: String,
    request: String,
    action: String,
    reason: String,
    text: String,
}

fn parse_form(body: &[u8]) -> Form {
    let mut f = Form::default();
    for (k, v) in form_urlencoded::parse(body) {
        let slot = match k.as_ref() {
            "csrf" => &mut f.csrf,
            "conversation" => &mut f.conversation,
            "request" => &mut f.request,
            "action" => &mut f.action,
            "reason" => &mut f.reason,
            "text" => &mut f.text,
            _ => continue,
        };
        *slot = v.into_owned();
    }
    f
}

async fn answer(state: &State, req: Request<Incoming>, host: &str) -> Reply {
    if !auth::same_origin(header(&req, ORIGIN), header(&req, "sec-fetch-site"), host) {
        return refuse(StatusCode::FORBIDDEN, "Cross-site request", "Answers are sent from the inbox's own page.");
    }
    let form_type = header(&req, CONTENT_TYPE)
        .is_some_and(|t| t.split(';').next().is_some_and(|m| m.trim() == "application/x-www-form-urlencoded"));
    if !form_type {
        return refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Not a form", "Send the page's form.");
    }
    let body = match Limited::new(req.into_body(), MAX_FORM_BYTES).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return refuse(StatusCode::PAYLOAD_TOO_LARGE, "Form too large", "The form is over 64 KiB."),
    };
    let form = parse_form(&body);
    if !auth::same(form.csrf.as_bytes(), state.csrf.as_bytes()) {
        return refuse(StatusCode::FORBIDDEN, "Form expired", "Reload the inbox and send the answer again.");
    }
    if form.conversation.is_empty() || form.request.is_empty() {
        return refuse(StatusCode::BAD_REQUEST, "Incomplete form", "The form names no run.");
    }
    let (answer, detail) = match form.action.as_str() {
        "approve" => (answer_approved(&form.request), String::new()),
        "decline" => match form.reason.parse::<Reason>() {
            Ok(r) => (answer_declined(&form.request, r.as_str()), r.as_str().to_string()),
            Err(e) => return refuse(StatusCode::BAD_REQUEST, "Unknown reason", e.message()),
        },
        "answer" if !form.text.is_empty() => (answer_output(&form.request, &form.text), form.text.clone()),
        "answer" => return refuse(StatusCode::BAD_REQUEST, "Empty answer", "Type an answer first."),
        // A resume that failed midway left its answer on record: the same answer again.
        "retry" => match accepted_answer(state, &form.conversation, &form.request).await {
            Some(a) => {
                let detail = page::describe(&a);
                (a, detail)
            }
            None => return refuse(StatusCode::CONFLICT, "Nothing to retry", "This run holds no unfinished answer."),
        },
        _ => return refuse(StatusCode::BAD_REQUEST, "Unknown action", "Approve, decline or answer."),
    };
    let sent = page::sent(&form.action, &detail);
    let resumed = state.client.ask_with_answer(state.toolkit.as_ref(), &form.conversation, None, &answer).await;
    match resumed {
        Ok(result) => html(StatusCode::OK, page::outcome(&form.conversation, &sent, &result)),
        Err(e) if e.kind() == ErrorKind::Conflict => html(StatusCode::CONFLICT, page::conflict(&form.conversation, &e)),
        Err(e) if e.kind() == ErrorKind::InvalidArgument || e.kind() == ErrorKind::AnswerMismatch => {
            html(StatusCode::BAD_REQUEST, page::failed(&form.conversation, &e))
        }
        Err(e) => html(StatusCode::BAD_GATEWAY, page::failed(&form.conversation, &e)),
    }
}
