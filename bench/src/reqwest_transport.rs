//! The transport ../shared/DESIGN.md first named as the default (reqwest, one pooled client,
//! HTTP/1.1 keep-alive), kept here so `make bench-transports` can measure the engine's own
//! transport against it on the same runs. Built only with the `reqwest` feature.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use toolnexus::{Error, ErrorKind, HttpRequest, HttpResponse, Transport};

/// A pooled reqwest client behind the engine's [`Transport`] trait.
pub struct ReqwestTransport {
    client: reqwest::Client,
}

impl ReqwestTransport {
    /// One client for every request, so connections are kept alive and reused.
    pub fn new() -> Result<ReqwestTransport, String> {
        let client = reqwest::Client::builder().http1_only().build().map_err(|e| e.to_string())?;
        Ok(ReqwestTransport { client })
    }
}

fn network(e: reqwest::Error) -> Error {
    Error::new(ErrorKind::Network, format!("reqwest: {e}"))
}

impl Transport for ReqwestTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'static, toolnexus::Result<HttpResponse>> {
        let mut builder = self.client.post(&request.url).timeout(request.timeout).body(request.body);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        Box::pin(async move {
            let response = builder.send().await.map_err(network)?;
            let status = response.status().as_u16();
            let headers = response
                .headers()
                .iter()
                .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str().to_string(), v.to_string())))
                .collect();
            let body: Bytes = response.bytes().await.map_err(network)?;
            Ok(HttpResponse { status, headers, body })
        })
    }
}
