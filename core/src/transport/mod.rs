//! How request bytes reach the provider. The loop builds the body once per turn and hands
//! bytes to a [`Transport`]; the default is [`Http1Transport`], a lean pooled keep-alive
//! HTTP/1.1 client over rustls. A host may supply its own (a recording double, a proxy,
//! its language's HTTP client).

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use crate::error::Result;

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
/// (a host transport's own failure) ends the run. A host transport whose client raises its
/// own error for an HTTP answer returns [`Error::http_from_host`](crate::Error::http_from_host):
/// it is retried by its status like an answer, and surfaces unchanged if the run gives up.
pub trait Transport: Send + Sync {
    /// POSTs `request`.
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, Result<HttpResponse>>;

    /// POSTs `request` and hands the body of a 2xx answer to `sink` as it arrives (the
    /// returned response's `body` is then empty); any other answer comes back whole, as from
    /// [`Transport::post`]. The default reads the answer with `post` and hands a 2xx body to
    /// `sink` in one piece: a transport that cannot stream still works, only not as the
    /// bytes arrive.
    fn post_streaming<'a>(
        &'a self,
        request: HttpRequest,
        sink: &'a mut dyn BodySink,
    ) -> BoxFuture<'a, Result<HttpResponse>> {
        Box::pin(async move {
            let mut resp = self.post(request).await?;
            if (200..300).contains(&resp.status) {
                sink.write(&resp.body)?;
                resp.body = Bytes::new();
            }
            Ok(resp)
        })
    }
}

/// Where a streamed response body goes, piece by piece as it arrives. An error stops the
/// read and ends the exchange with it.
pub trait BodySink: Send {
    /// The next bytes of the body.
    fn write(&mut self, bytes: &[u8]) -> Result<()>;

    /// The body announced `n` bytes (a hint: nothing is promised until they arrive).
    fn expect(&mut self, _n: usize) {}
}

mod http1;
mod pool;
pub(crate) mod tls;

#[cfg(feature = "fuzzing")]
pub(crate) use http1::read_response_from;
pub use http1::Http1Transport;
