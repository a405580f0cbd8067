//! TLS for the default transport: rustls with the ring provider and the platform's trust
//! store, configured once per process.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::error::{Error, ErrorKind, Result};

/// rustls with the ring provider and the platform's trust store, no ALPN.
pub(crate) fn client_config() -> Result<rustls::ClientConfig> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let failed = |e: rustls::Error| Error::new(ErrorKind::Config, format!("TLS setup failed: {e}"));
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(failed)?
        .with_platform_verifier()
        .map_err(failed)?
        .with_no_client_auth())
}

fn config() -> Result<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<std::result::Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    let built = CONFIG.get_or_init(|| {
        let mut cfg = client_config().map_err(|e| e.message().to_string())?;
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(cfg))
    });
    built.clone().map_err(|e| Error::new(ErrorKind::Config, e))
}

/// Runs the TLS handshake for `host` over `tcp`.
pub(super) async fn connect(host: &str, tcp: TcpStream) -> Result<TlsStream<TcpStream>> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| Error::invalid(format!("invalid TLS server name {host:?}")))?;
    TlsConnector::from(config()?)
        .connect(name, tcp)
        .await
        .map_err(|e| Error::new(ErrorKind::Network, format!("TLS handshake with {host} failed: {e}")))
}
