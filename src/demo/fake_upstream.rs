//! A scripted Messages API on loopback, for `toolmend demo`, the tests and the benchmarks. It
//! records every request and answers each with what the responder returns.

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::serve::ListenerExt;
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query string.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Vec<u8>>,
    /// Pause before each chunk.
    pub delay: Duration,
    /// Break the connection after the chunks instead of ending the body.
    pub cut: bool,
}

impl Reply {
    /// An SSE stream, sent in chunks of `chunk_size` bytes.
    pub fn sse(body: impl AsRef<[u8]>, chunk_size: usize) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream; charset=utf-8".into())],
            chunks: body.as_ref().chunks(chunk_size.max(1)).map(<[u8]>::to_vec).collect(),
            delay: Duration::ZERO,
            cut: false,
        }
    }

    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.to_string().into_bytes()],
            delay: Duration::ZERO,
            cut: false,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn cut(mut self) -> Self {
        self.cut = true;
        self
    }
}

pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

/// A running fake; stops when dropped.
pub struct FakeUpstream {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    stop: CancellationToken,
}

impl FakeUpstream {
    pub async fn start(responder: Responder) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let recorded = requests.clone();
        let app = axum::Router::new().fallback(move |request: Request| {
            let (responder, recorded) = (responder.clone(), recorded.clone());
            async move { answer(request, &responder, &recorded).await }
        });
        let token = stop.clone();
        tokio::spawn(async move {
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app).with_graceful_shutdown(token.cancelled_owned()).await;
        });
        Ok(Self { addr, requests, stop })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn answer(request: Request, responder: &Responder, recorded: &Mutex<Vec<RecordedRequest>>) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, 64 << 20).await.unwrap_or_default().to_vec();
    let request = RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path_and_query().map_or("/".into(), |p| p.to_string()),
        headers: parts.headers.iter().map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string())).collect(),
        body,
    };
    let reply = responder(&request);
    recorded.lock().unwrap_or_else(|p| p.into_inner()).push(request);
    let (delay, cut) = (reply.delay, reply.cut);
    let chunks = futures_util::stream::unfold(reply.chunks.into_iter(), move |mut chunks| async move {
        match chunks.next() {
            Some(chunk) => {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok::<Bytes, std::io::Error>(Bytes::from(chunk)), chunks))
            }
            None if cut => {
                // Let the server flush what was sent before it aborts the connection.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some((Err(std::io::Error::other("cut by the script")), chunks))
            }
            None => None,
        }
    });
    let mut response = Response::new(Body::from_stream(chunks));
    *response.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            response.headers_mut().append(name, value);
        }
    }
    response
}
