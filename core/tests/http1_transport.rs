//! The default HTTP/1.1 transport against hand-written servers: chunked and close-delimited
//! bodies, keep-alive reuse, a pooled connection the server closed, interim responses,
//! per-request timeouts and failures that must not hang.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolnexus::{ErrorKind, Http1Transport, HttpRequest, Transport};

/// Reads one request (head + Content-Length body); `None` when the peer closed.
async fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let len = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
                .unwrap_or(0usize);
            while buf.len() < end + 4 + len {
                let mut chunk = [0u8; 4096];
                let n = s.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[end + 4..end + 4 + len].to_vec();
            buf.drain(..end + 4 + len);
            return Some((head, body));
        }
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A server answering each request on a connection with `respond(connection_no, request_no)`;
/// it closes the connection after the responses `close_after` allows.
async fn server(
    respond: impl Fn(usize, usize) -> Vec<u8> + Send + Sync + 'static,
    close_after: usize,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/chat", listener.local_addr().unwrap());
    let conns = Arc::new(AtomicUsize::new(0));
    let c2 = conns.clone();
    let respond = Arc::new(respond);
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else { return };
            let conn_no = c2.fetch_add(1, Ordering::SeqCst);
            let respond = respond.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                for req_no in 0..close_after {
                    if read_request(&mut s, &mut buf).await.is_none() {
                        return;
                    }
                    if s.write_all(&respond(conn_no, req_no)).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, conns)
}

fn req(url: &str) -> HttpRequest {
    HttpRequest {
        url: url.into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: Bytes::from_static(b"{}"),
        timeout: Duration::from_secs(5),
    }
}

fn ok(body: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len())
        .into_bytes()
}

#[tokio::test]
async fn keep_alive_reuses_one_connection() {
    let (url, conns) = server(|_, n| ok(&format!("{{\"n\":{n}}}")), usize::MAX).await;
    let t = Http1Transport::new();
    for n in 0..3 {
        let r = t.post(req(&url)).await.unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, format!("{{\"n\":{n}}}"));
    }
    assert_eq!(conns.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn chunked_bodies_with_extensions_and_trailers_are_decoded() {
    let resp = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4;ext=1\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nx-trailer: y\r\n\r\n".to_vec();
    let (url, conns) = server(move |_, _| resp.clone(), usize::MAX).await;
    let t = Http1Transport::new();
    for _ in 0..2 {
        assert_eq!(t.post(req(&url)).await.unwrap().body, "{\"a\":1}");
    }
    assert_eq!(conns.load(Ordering::SeqCst), 1, "a chunked response leaves the connection reusable");
}

#[tokio::test]
async fn a_pooled_connection_the_server_closed_is_replaced() {
    // Each connection serves one response, then the server closes it.
    let (url, conns) = server(|_, _| ok("{}"), 1).await;
    let t = Http1Transport::new();
    for _ in 0..3 {
        assert_eq!(t.post(req(&url)).await.unwrap().status, 200);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(conns.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn close_delimited_bodies_and_interim_responses() {
    let (url, _) = server(
        |_, _| b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nconnection: close\r\nretry-after: 3\r\n\r\n{\"busy\":true}".to_vec(),
        1,
    )
    .await;
    let r = Http1Transport::new().post(req(&url)).await.unwrap();
    assert_eq!(r.status, 503);
    assert_eq!(r.header("Retry-After"), Some("3"));
    assert_eq!(r.body, "{\"busy\":true}");
}

#[tokio::test]
async fn a_silent_server_times_out_and_a_dead_port_fails_fast() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/x", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _held = listener.accept().await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let mut r = req(&url);
    r.timeout = Duration::from_millis(100);
    let e = Http1Transport::new().post(r).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network);
    assert!(e.message().contains("timed out"));

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let e = Http1Transport::new().post(req(&format!("http://127.0.0.1:{port}/x"))).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network);
}

#[tokio::test]
async fn a_cut_response_and_garbage_are_errors_not_hangs() {
    let (url, _) = server(|_, _| b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"short\"".to_vec(), 1).await;
    assert_eq!(Http1Transport::new().post(req(&url)).await.unwrap_err().kind(), ErrorKind::Network);
    let (url, _) = server(|_, _| b"NOT HTTP AT ALL\r\n\r\n".to_vec(), 1).await;
    assert_eq!(Http1Transport::new().post(req(&url)).await.unwrap_err().kind(), ErrorKind::Protocol);
}

#[tokio::test]
async fn tls_to_a_plain_server_fails_cleanly() {
    let (url, _) = server(|_, _| ok("{}"), 1).await;
    let mut r = req(&url.replace("http://", "https://"));
    r.timeout = Duration::from_millis(500);
    let e = Http1Transport::new().post(r).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network);
}

/// A server whose first connection answers once with `first` bytes, then (after `later_ms`)
/// writes `later` and closes; every later connection answers each request with `ok(n)`.
async fn first_connection_misbehaves(first: Vec<u8>, later: Option<(u64, Vec<u8>)>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/chat", listener.local_addr().unwrap());
    let conns = Arc::new(AtomicUsize::new(0));
    let c2 = conns.clone();
    let first = Arc::new(first);
    let later = Arc::new(later);
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else { return };
            let conn_no = c2.fetch_add(1, Ordering::SeqCst);
            let (first, later) = (first.clone(), later.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                if conn_no == 0 {
                    if read_request(&mut s, &mut buf).await.is_none() {
                        return;
                    }
                    let _ = s.write_all(&first).await;
                    if let Some((ms, bytes)) = later.as_ref() {
                        tokio::time::sleep(Duration::from_millis(*ms)).await;
                        let _ = s.write_all(bytes).await;
                    }
                    // Whatever comes next on this connection is answered as stale.
                    while read_request(&mut s, &mut buf).await.is_some() {
                        let _ = s.write_all(&ok("{\"stale\":true}")).await;
                    }
                    return;
                }
                let mut n = 0;
                while read_request(&mut s, &mut buf).await.is_some() {
                    let _ = s.write_all(&ok(&format!("{{\"fresh\":{n}}}"))).await;
                    n += 1;
                }
            });
        }
    });
    (url, conns)
}

#[tokio::test]
async fn a_408_sent_on_an_idle_connection_is_not_the_next_response() {
    // Node's own http server does this to idle keep-alive connections.
    let timeout = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n".to_vec();
    let (url, conns) = first_connection_misbehaves(ok("{\"first\":true}"), Some((50, timeout))).await;
    let t = Http1Transport::new();
    assert_eq!(t.post(req(&url)).await.unwrap().body, "{\"first\":true}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = t.post(req(&url)).await.unwrap();
    assert_eq!((r.status, &r.body[..]), (200, &b"{\"fresh\":0}"[..]));
    assert_eq!(conns.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn bytes_after_a_complete_response_are_never_read_as_the_next() {
    // The extra bytes arrive after the response was read, while the connection sits idle.
    let (url, _) = first_connection_misbehaves(ok("{\"first\":true}"), Some((50, ok("{\"stale\":0}")))).await;
    let t = Http1Transport::new();
    assert_eq!(t.post(req(&url)).await.unwrap().body, "{\"first\":true}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    for n in 0..2 {
        assert_eq!(t.post(req(&url)).await.unwrap().body, format!("{{\"fresh\":{n}}}"));
    }
    // And in the same write as the response: the pool refuses the connection at once.
    let mut both = ok("{\"first\":true}");
    both.extend(ok("{\"stale\":0}"));
    let (url, _) = first_connection_misbehaves(both, None).await;
    let t = Http1Transport::new();
    assert_eq!(t.post(req(&url)).await.unwrap().body, "{\"first\":true}");
    assert_eq!(t.post(req(&url)).await.unwrap().body, "{\"fresh\":0}");
}

#[tokio::test]
async fn sizes_from_the_network_cannot_overflow_the_body_cap() {
    for head in [
        // Wraps a usize sum in a release build: must be refused, not read.
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\nffffffffffffffff\r\n",
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4000001\r\n",
        "HTTP/1.1 200 OK\r\ncontent-length: 18446744073709551615\r\n\r\n",
    ] {
        let bytes = head.as_bytes().to_vec();
        let (url, _) = server(move |_, _| bytes.clone(), 1).await;
        let e = Http1Transport::new().post(req(&url)).await.unwrap_err();
        // Refused on reading the size, not after reading to the end of the stream; the server's
        // fault, chunked or not (a network error would be retried).
        assert!(e.message().contains("too large"), "{head:?}: {e:?}");
        assert_eq!(e.kind(), ErrorKind::Protocol, "{head:?}: {e:?}");
    }
    for bad in ["zz\r\n", "1\r\n{xx\r\n"] {
        let bytes = format!("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{bad}").into_bytes();
        let (url, _) = server(move |_, _| bytes.clone(), 1).await;
        let e = Http1Transport::new().post(req(&url)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "{bad:?}: {e:?}");
    }
    let bytes = b"HTTP/1.1 200 OK\r\ncontent-length: 99999999999999999999999\r\n\r\n".to_vec();
    let (url, _) = server(move |_, _| bytes.clone(), 1).await;
    assert_eq!(Http1Transport::new().post(req(&url)).await.unwrap_err().kind(), ErrorKind::Protocol);
}

#[tokio::test]
async fn signed_sizes_and_endless_interim_responses_are_refused() {
    for wire in [
        "HTTP/1.1 200 OK\r\ncontent-length: +2\r\n\r\n{}".to_string(),
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n+2\r\n{}\r\n0\r\n\r\n".to_string(),
        "HTTP/1.1 100 Continue\r\n\r\n".repeat(17) + "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
    ] {
        let bytes = wire.into_bytes();
        let (url, _) = server(move |_, _| bytes.clone(), 1).await;
        let e = Http1Transport::new().post(req(&url)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e:?}");
    }
}

#[tokio::test]
async fn an_endless_head_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/x", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let Ok((mut s, _)) = listener.accept().await else { return };
        let mut buf = Vec::new();
        read_request(&mut s, &mut buf).await;
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n").await;
        loop {
            if s.write_all(b"x-filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n").await.is_err() {
                return;
            }
        }
    });
    let e = Http1Transport::new().post(req(&url)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e:?}");
}
