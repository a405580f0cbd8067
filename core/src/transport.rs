//! How request bytes reach the provider. The loop builds the body once per turn and hands
//! bytes to a [`Transport`]; the default is one pooled keep-alive reqwest client (rustls).
//! A host may supply its own (a recording double, a proxy, its language's HTTP client).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use crate::error::{Error, ErrorKind, Result};

/// One POST to the provider.
#[derive(Clone)]
pub struct HttpRequest {
    /// The absolute URL.
    pub url: String,
    /// Header name/value pairs (names lowercase). Values may hold secrets: never log them.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Bytes,
    /// How long this one request may take.
    pub timeout: Duration,
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("header_names", &names)
            .field("body_len", &self.body.len())
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The provider's answer, whatever its status.
#[derive(Clone, Debug)]
pub struct HttpResponse {
    /// The HTTP status.
    pub status: u16,
    /// Response headers (only `retry-after` is read by the engine).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl HttpResponse {
    /// The first header called `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Sends one request. Return `Ok` for any HTTP answer (the loop reads the status) and `Err`
/// only when no answer came: an [`ErrorKind::Network`] error is retried, any other kind
/// (a host transport's own failure) ends the run.
pub trait Transport: Send + Sync {
    /// POSTs `request`.
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse>>;
}

/// The default transport: a pooled, keep-alive reqwest client over rustls.
#[derive(Clone)]
pub struct ReqwestTransport {
    client: reqwest::Client,
}

impl ReqwestTransport {
    /// A transport with its own connection pool.
    pub fn new() -> Result<ReqwestTransport> {
        let tls = tls_config()?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| Error::new(ErrorKind::Config, format!("cannot build the HTTP client: {e}")))?;
        Ok(ReqwestTransport { client })
    }

    /// A shared handle to a new transport.
    pub fn shared() -> Result<Arc<dyn Transport>> {
        Ok(Arc::new(ReqwestTransport::new()?))
    }
}

fn tls_config() -> Result<rustls::ClientConfig> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorKind::Config, format!("TLS setup failed: {e}")))?
        .with_platform_verifier()
        .map(|b| b.with_no_client_auth())
        .map_err(|e| Error::new(ErrorKind::Config, format!("TLS setup failed: {e}")))
}

impl Transport for ReqwestTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse>> {
        let mut rb = self.client.post(&request.url).timeout(request.timeout).body(request.body);
        for (k, v) in &request.headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        let timeout = request.timeout;
        Box::pin(async move {
            let resp = rb.send().await.map_err(|e| network_error(&e, timeout))?;
            let status = resp.status().as_u16();
            let headers = resp
                .headers()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect();
            let body = resp.bytes().await.map_err(|e| network_error(&e, timeout))?;
            Ok(HttpResponse { status, headers, body })
        })
    }
}

fn network_error(e: &reqwest::Error, timeout: Duration) -> Error {
    // reqwest's Display includes the URL but never headers, so no secret can leak here.
    let what = if e.is_timeout() {
        format!("request timed out after {} ms", timeout.as_millis())
    } else if e.is_connect() {
        "connection failed".to_string()
    } else {
        "request failed".to_string()
    };
    let mut msg = format!("{what}: {e}");
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(&format!(": {s}"));
        src = s.source();
    }
    Error::new(ErrorKind::Network, msg)
}
