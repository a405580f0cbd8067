//! Who may use the inbox: the access token (query once, then a cookie, or a bearer header),
//! the Host check that stops DNS rebinding on loopback, and the CSRF checks of a POST.
//! Pure functions over header values, so each rule is tested apart from the server.

use std::net::SocketAddr;

use toolnexus::{Error, ErrorKind, Result};

use crate::MIN_TOKEN_LEN;

/// 32 random bytes from the operating system, as 64 hex digits: a fresh access token (for
/// a CLI's `--token` default) or CSRF token.
pub fn random_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("no randomness from the operating system: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A token must be long enough to guess at no rate and safe inside a URL and a cookie.
pub(crate) fn check_token_shape(token: &str) -> Result<()> {
    if token.len() < MIN_TOKEN_LEN {
        return Err(Error::invalid(format!("the inbox token must be at least {MIN_TOKEN_LEN} characters")));
    }
    if !token.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b)) {
        return Err(Error::invalid("the inbox token may hold only A-Z a-z 0-9 - _ . ~"));
    }
    Ok(())
}

/// Equality whose time depends on the lengths only, not on where the bytes differ.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// `addr` as the host part of a URL (`127.0.0.1:8080`, `[::1]:8080`).
pub(crate) fn url_host(addr: SocketAddr) -> String {
    addr.to_string()
}

/// The Host values a loopback server answers to: a page served under any other name is a
/// DNS-rebinding attempt (a remote site whose name resolves to 127.0.0.1).
pub(crate) fn host_allowed(host: Option<&str>, bound: SocketAddr) -> bool {
    let Some(host) = host else { return false };
    if !bound.ip().is_loopback() {
        // Reached over the network under whatever name the user typed; the token guards it.
        return true;
    }
    let port = bound.port();
    [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}"), url_host(bound)]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host))
}

/// The cookie that carries the token, named per port: browsers share cookies between the
/// ports of one host, and two inboxes must not overwrite each other's.
pub(crate) fn cookie_name(bound: SocketAddr) -> String {
    format!("toolnexus_inbox_{}", bound.port())
}

/// The `Set-Cookie` value that keeps `token` for this server.
pub(crate) fn set_cookie(bound: SocketAddr, token: &str) -> String {
    format!("{}={token}; Path=/; HttpOnly; SameSite=Strict", cookie_name(bound))
}

/// The value of cookie `name` in a `Cookie` header.
pub(crate) fn cookie<'a>(header: Option<&'a str>, name: &str) -> Option<&'a str> {
    header?.split(';').filter_map(|kv| kv.trim().split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// The token of an `Authorization: Bearer <token>` header.
pub(crate) fn bearer(header: Option<&str>) -> Option<&str> {
    let (scheme, token) = header?.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Whether a POST comes from the inbox's own page: an `Origin`, when the browser sends one,
/// must be this server's, and `Sec-Fetch-Site`, when sent, must say same-origin.
pub(crate) fn same_origin(origin: Option<&str>, fetch_site: Option<&str>, host: &str) -> bool {
    let origin_ok = match origin {
        None => true,
        Some(o) => o.eq_ignore_ascii_case(&format!("http://{host}")),
    };
    let site_ok = match fetch_site {
        None => true,
        Some(s) => s.eq_ignore_ascii_case("same-origin"),
    };
    origin_ok && site_ok
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn tokens_are_random_hex_and_shapes_are_checked() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(check_token_shape(&a).is_ok());
        assert!(check_token_shape("short").is_err());
        assert!(check_token_shape("0123456789abcdef;x").is_err());
        assert!(check_token_shape("0123456789abcdef-_.~").is_ok());
    }

    #[test]
    fn comparison_needs_every_byte() {
        assert!(same(b"abcdef", b"abcdef"));
        assert!(!same(b"abcdef", b"abcdeg"));
        assert!(!same(b"abc", b"abcdef"));
        assert!(!same(b"", b"x"));
    }

    #[test]
    fn a_loopback_server_answers_to_loopback_names_only() {
        let bound = at("127.0.0.1:8123");
        for ok in ["127.0.0.1:8123", "localhost:8123", "LOCALHOST:8123", "[::1]:8123"] {
            assert!(host_allowed(Some(ok), bound), "{ok}");
        }
        for bad in ["evil.example:8123", "127.0.0.1:9999", "127.0.0.1", ""] {
            assert!(!host_allowed(Some(bad), bound), "{bad}");
        }
        assert!(!host_allowed(None, bound));
        assert!(host_allowed(Some("box.lan:8123"), at("0.0.0.0:8123")));
    }

    #[test]
    fn headers_are_read() {
        assert_eq!(cookie(Some("a=1; toolnexus_inbox_80=tok; b=2"), "toolnexus_inbox_80"), Some("tok"));
        assert_eq!(cookie(Some("a=1"), "toolnexus_inbox_80"), None);
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("Basic abc")), None);
        assert!(same_origin(Some("http://127.0.0.1:80"), Some("same-origin"), "127.0.0.1:80"));
        assert!(same_origin(None, None, "127.0.0.1:80"));
        assert!(!same_origin(Some("http://evil.example"), None, "127.0.0.1:80"));
        assert!(!same_origin(None, Some("cross-site"), "127.0.0.1:80"));
        assert_eq!(set_cookie(at("127.0.0.1:80"), "t"), "toolnexus_inbox_80=t; Path=/; HttpOnly; SameSite=Strict");
    }
}
