//! The API's HTTP/1 server: accepts connections under the [`Registry`]'s caps, runs each
//! (TLS handshake included) in its own task, and bounds how long a client may take to send a
//! request head ([`ConnectionLimits::header_timeout`], which is also the idle keep-alive
//! timeout) and a request body ([`ConnectionLimits::body_timeout`]).
//!
//! axum's own `serve` sets no timeouts and admits every connection, so one client could hold
//! every file descriptor of the hub.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::Request;
use futures::StreamExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use flotilla_adapters::connections::{ConnectionLimits, Registry, Slot, Ticket};

/// What a refused plain-HTTP client reads before the connection closes.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
content-length: 21\r\nconnection: close\r\nretry-after: 1\r\n\r\ntoo many connections\n";

/// How long a connection accepted over a cap, before its client sent anything, may take to send
/// its first bytes.
const HEAD_WAIT: Duration = Duration::from_millis(200);
/// Connections waiting for their first bytes at once; past that they are refused at once.
const HEAD_WAITS_MAX: usize = 64;

/// A request body that did not arrive within the body timeout.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyTimeout(Duration);

/// The registry of a running server, in every request's extensions (for per-client watch
/// caps).
#[derive(Debug, Clone)]
pub struct Client {
    /// The connections and watches of the server.
    pub registry: Arc<Registry>,
    /// The client's address.
    pub peer: SocketAddr,
}

/// Serves `app` on `listener` (over TLS with `tls`) until `stop` resolves, then waits for the
/// open connections to finish.
pub async fn serve(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    app: Router,
    limits: ConnectionLimits,
    stop: impl Future<Output = ()> + Send + 'static,
) {
    let registry = Registry::new(limits);
    let tls = tls.map(TlsAcceptor::from);
    let head_waits = Arc::new(tokio::sync::Semaphore::new(HEAD_WAITS_MAX));
    let (stopping, stop_seen) = watch::channel(false);
    let (closed, all_closed) = watch::channel(());
    let mut stop = pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tracing::warn!(%error, "accepting a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let connection = Connection {
            client: Client {
                registry: registry.clone(),
                peer,
            },
            app: app.clone(),
            stopping: stop_seen.clone(),
            limits,
        };
        let tls = tls.clone();
        let all_closed = all_closed.clone();
        match admit(&registry, stream, peer, tls.is_some()) {
            Admission::Now(stream, ticket) => {
                tokio::spawn(async move {
                    connection.run(stream, tls, ticket).await;
                    drop(all_closed);
                });
            }
            Admission::Later(stream) => match head_waits.clone().try_acquire_owned() {
                Ok(permit) => {
                    tokio::spawn(async move {
                        if let Some((stream, ticket)) =
                            admit_on_head(&registry_of(&connection), stream, peer).await
                        {
                            drop(permit);
                            connection.run(stream, None, ticket).await;
                        }
                        drop(all_closed);
                    });
                }
                Err(_) => refuse(&stream),
            },
            Admission::Refused => {}
        }
    }
    let _ = stopping.send(true);
    drop(all_closed);
    drop(listener);
    closed.closed().await;
}

/// What the accept loop does with a connection.
enum Admission {
    /// Serve it.
    Now(TcpStream, Ticket),
    /// Over a cap, plain HTTP, and nothing sent yet: wait a moment for its head.
    Later(std::net::TcpStream),
    /// Refused (answered 503 on plain HTTP, closed on TLS).
    Refused,
}

/// Admits a connection, or refuses it (a 503 on plain HTTP, a close on TLS).
///
/// Over a cap, a plain connection whose whole request head has already arrived takes the place
/// of the oldest connection still waiting for its head; one that sent part of a head is
/// refused at once, in this loop, so a flood of slow connections costs the hub a few system
/// calls each; one that sent nothing yet (accepted before its client's first segment) waits up
/// to [`HEAD_WAIT`] for it, at most [`HEAD_WAITS_MAX`] at a time. TLS hides the head, so over a
/// cap a TLS connection always takes the oldest waiting one's place.
fn admit(registry: &Arc<Registry>, stream: TcpStream, peer: SocketAddr, tls: bool) -> Admission {
    let admitted = |stream, may_evict| match registry.admit(peer.ip(), may_evict) {
        Ok(ticket) => Admission::Now(stream, ticket),
        Err(_) => Admission::Refused,
    };
    if !registry.full_for(peer.ip()) {
        return admitted(stream, false);
    }
    if tls {
        return admitted(stream, true);
    }
    // tokio knows no readiness of a socket it has just accepted: peek with the system call.
    let Ok(stream) = stream.into_std() else {
        return Admission::Refused;
    };
    match whole_head(&stream) {
        None => Admission::Later(stream),
        Some(ready) => match admit_plain(registry, stream, peer, ready) {
            Some((stream, ticket)) => Admission::Now(stream, ticket),
            None => Admission::Refused,
        },
    }
}

/// Whether the peeked bytes hold a whole request head; `None` when nothing arrived yet.
fn whole_head(stream: &std::net::TcpStream) -> Option<bool> {
    let mut head = [0_u8; 8_192];
    match stream.peek(&mut head) {
        Ok(0) => Some(false),
        Ok(read) => Some(head[..read].windows(4).any(|w| w == b"\r\n\r\n")),
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => None,
        Err(_) => Some(false),
    }
}

/// Admits a plain connection over a cap (taking a waiting one's place when `ready`), or
/// answers it 503.
fn admit_plain(
    registry: &Arc<Registry>,
    stream: std::net::TcpStream,
    peer: SocketAddr,
    ready: bool,
) -> Option<(TcpStream, Ticket)> {
    let Ok(ticket) = registry.admit(peer.ip(), ready) else {
        refuse(&stream);
        return None;
    };
    ticket.slot().mark_started();
    let stream = TcpStream::from_std(stream).ok()?;
    Some((stream, ticket))
}

/// Waits up to [`HEAD_WAIT`] for a connection's first bytes, then admits or refuses it.
async fn admit_on_head(
    registry: &Arc<Registry>,
    stream: std::net::TcpStream,
    peer: SocketAddr,
) -> Option<(TcpStream, Ticket)> {
    let stream = TcpStream::from_std(stream).ok()?;
    let _ = tokio::time::timeout(HEAD_WAIT, stream.readable()).await;
    let stream = stream.into_std().ok()?;
    let ready = whole_head(&stream).unwrap_or(false);
    admit_plain(registry, stream, peer, ready)
}

/// Answers a refused plain connection. A fresh socket's send buffer is empty: this never
/// blocks.
fn refuse(stream: &std::net::TcpStream) {
    let _ = std::io::Write::write(&mut &*stream, REFUSAL);
}

fn registry_of(connection: &Connection) -> Arc<Registry> {
    connection.client.registry.clone()
}

/// One accepted connection.
struct Connection {
    client: Client,
    app: Router,
    stopping: watch::Receiver<bool>,
    limits: ConnectionLimits,
}

impl Connection {
    /// Serves the connection until it ends, times out, or the registry closes it.
    async fn run(self, stream: TcpStream, tls: Option<TlsAcceptor>, ticket: Ticket) {
        let slot = ticket.slot().clone();
        let served = async {
            match tls {
                None => self.http(stream, &slot).await,
                Some(acceptor) => {
                    let handshake = acceptor.accept(stream);
                    match tokio::time::timeout(self.limits.header_timeout, handshake).await {
                        Ok(Ok(stream)) => self.http(stream, &slot).await,
                        Ok(Err(error)) => tracing::debug!(%error, "TLS handshake failed"),
                        Err(_) => tracing::debug!("TLS handshake timed out"),
                    }
                }
            }
        };
        tokio::select! {
            () = served => {}
            () = slot.evicted() => {}
        }
        drop(ticket);
    }

    async fn http<I>(&self, io: I, slot: &Arc<Slot>)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let service = {
            let app = self.app.clone();
            let client = self.client.clone();
            let slot = slot.clone();
            let body_timeout = self.limits.body_timeout;
            let stopping = self.stopping.clone();
            hyper::service::service_fn(move |request: Request<Incoming>| {
                slot.mark_started();
                let mut request = with_body_deadline(request.map(Body::new), body_timeout);
                request.extensions_mut().insert(ConnectInfo(client.peer));
                request.extensions_mut().insert(client.clone());
                let watch = is_watch(&request).then(|| client.registry.watch(client.peer.ip()));
                let app = app.clone();
                let mut stopping = stopping.clone();
                async move {
                    let ticket = match watch {
                        Some(Ok(ticket)) => Some(ticket),
                        Some(Err(refused)) => return Ok(too_many_watches(refused)),
                        None => None,
                    };
                    let response = app.oneshot(request).await?;
                    Ok::<_, std::convert::Infallible>(match ticket {
                        // The watch holds its place until its stream ends; a stopping server
                        // ends it (the client watches again elsewhere), or the drain would
                        // wait for the watch's own timeout.
                        Some(ticket) => response.map(|body| {
                            let stop = async move {
                                let _ = stopping.wait_for(|stop| *stop).await;
                            };
                            let stream = body.into_data_stream().map(move |chunk| {
                                let _held = &ticket;
                                chunk
                            });
                            Body::from_stream(stream.take_until(Box::pin(stop)))
                        }),
                        None => response,
                    })
                }
            })
        };
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_timeout);
        let mut connection = pin!(
            builder
                .serve_connection(TokioIo::new(io), service)
                .with_upgrades()
        );
        let mut stopping = self.stopping.clone();
        let stop_seen = async move { stopping.wait_for(|stop| *stop).await.is_ok() };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, peer = %self.client.peer, "connection ended");
                }
            }
            seen = stop_seen => {
                if seen {
                    // Ends an idle connection now, a busy one after its response.
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        }
    }
}

/// A Kubernetes watch (`?watch=true` or `?watch=1`): a response that streams until the client
/// or the timeout ends it.
fn is_watch(request: &Request<Body>) -> bool {
    request.uri().query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    })
}

/// 429 with a Kubernetes `Status`, as the API server answers a client over its limits.
fn too_many_watches(refused: flotilla_adapters::connections::Refused) -> axum::response::Response {
    let status = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": refused.to_string(), "reason": "TooManyRequests", "code": 429,
    });
    axum::response::IntoResponse::into_response((
        axum::http::StatusCode::TOO_MANY_REQUESTS,
        [(axum::http::header::RETRY_AFTER, "1")],
        axum::Json(status),
    ))
}

/// The request, with a body that fails once `timeout` has passed since the head arrived.
fn with_body_deadline(request: Request<Body>, timeout: Duration) -> Request<Body> {
    let headers = request.headers();
    let no_body = !headers.contains_key(axum::http::header::TRANSFER_ENCODING)
        && headers
            .get(axum::http::header::CONTENT_LENGTH)
            .is_none_or(|length| length.as_bytes() == b"0");
    if no_body {
        return request;
    }
    let deadline = tokio::time::Instant::now() + timeout;
    request.map(|body| {
        let chunks = body.into_data_stream();
        let timed = futures::stream::unfold(Some(chunks), move |chunks| async move {
            let mut chunks = chunks?;
            match tokio::time::timeout_at(deadline, chunks.next()).await {
                Ok(Some(Ok(chunk))) => Some((Ok::<Bytes, axum::BoxError>(chunk), Some(chunks))),
                Ok(Some(Err(error))) => Some((Err(error.into()), None)),
                Ok(None) => None,
                Err(_) => Some((Err(BodyTimeout(timeout).into()), None)),
            }
        });
        Body::from_stream(timed)
    })
}
