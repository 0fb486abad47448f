//! The upstream client: hyper's pooled HTTP/1 client, over TCP or TLS (rustls with the
//! platform's verifier, as reqwest had), whose connections are [`UpstreamIo`]: reqwest gives no
//! hold of a connection's bytes, and both an early answer's rescue and the [`Cut`] need it.
//! Responses are handed on as `reqwest::Response`, which the relay reads. An upstream reached
//! through a proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, as reqwest reads them) is sent with
//! reqwest, which speaks to proxies, as before (without the rescue and the cut).

use super::upstream_io::{Cut, UpstreamIo};
use axum::http::header::ACCEPT;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Uri};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder, MaybeHttpsStream};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpStream;

type Stream = UpstreamIo<MaybeHttpsStream<TokioIo<TcpStream>>>;

/// Connects as hyper-rustls does, and wraps the connection in [`UpstreamIo`].
#[derive(Clone)]
pub struct Connector(HttpsConnector<HttpConnector>);

impl tower_service::Service<Uri> for Connector {
    type Response = Stream;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move { Ok(UpstreamIo::new(connecting.await?)) })
    }
}

/// One upstream client; clones share its pool.
#[derive(Clone)]
pub struct UpstreamClient {
    direct: Client<Connector, reqwest::Body>,
    /// The proxy settings of the environment, and the client for the upstreams they take.
    proxies: Arc<Matcher>,
    proxied: reqwest::Client,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("the client for proxies could not be built: {0}")]
    Proxied(#[from] reqwest::Error),
}

/// Why a request got no response (its causes say more: a [`super::tee::ClientBodyError`]
/// among them when the client's body ended it).
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("the upstream URL is not valid: {0}")]
    Url(#[from] axum::http::uri::InvalidUri),
    #[error("{0}")]
    Request(#[source] hyper_util::client::legacy::Error),
    #[error("{0}")]
    Proxied(#[source] reqwest::Error),
}

impl UpstreamClient {
    pub fn new() -> Result<Self, ClientError> {
        use rustls_platform_verifier::ConfigVerifierExt;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(Duration::from_secs(30)));
        // As reqwest had them: a connection whose bytes go unacknowledged for 30 s is dropped
        // (an upstream that never reads the body then lets it go).
        http.set_keepalive(Some(Duration::from_secs(15)));
        http.set_keepalive_interval(Some(Duration::from_secs(15)));
        http.set_keepalive_retries(Some(3));
        #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
        http.set_tcp_user_timeout(Some(Duration::from_secs(30)));
        // Without the platform's roots (none installed) the sidecar still starts, as it did with
        // reqwest: a plain-HTTP upstream works, and a TLS one fails its handshake.
        let tls = rustls::ClientConfig::with_platform_verifier().unwrap_or_else(|error| {
            tracing::warn!(%error, "the platform's certificate verifier is not available: TLS upstreams will fail");
            let roots = rustls::RootCertStore::empty();
            rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth()
        });
        let https =
            HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(Connector(https));
        let proxied = reqwest::Client::builder()
            // A transparent hop: the client sees a redirect and decides, as it would without
            // toolmend (following it would send the call elsewhere, a 303 as a GET).
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            .pool_idle_timeout(Duration::from_secs(60))
            .build()?;
        Ok(Self { direct: client, proxies: Arc::new(Matcher::from_system()), proxied })
    }

    /// Sends a request; the response carries its connection's [`Cut`] in its extensions.
    /// No redirect is followed (a transparent hop: the client sees it and decides).
    pub async fn send(
        &self,
        method: &Method,
        url: &str,
        headers: HeaderMap,
        body: reqwest::Body,
    ) -> Result<reqwest::Response, SendError> {
        let uri: Uri = url.parse()?;
        if self.proxies.intercept(&uri).is_some() {
            let request = self.proxied.request(method.clone(), url).headers(headers).body(body);
            return request.send().await.map_err(SendError::Proxied);
        }
        let mut request = Request::new(body);
        *request.method_mut() = method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        // What reqwest sent when the client gave none.
        request.headers_mut().entry(ACCEPT).or_insert(HeaderValue::from_static("*/*"));
        let response = self.direct.request(request).await.map_err(SendError::Request)?;
        Ok(reqwest::Response::from(response.map(reqwest::Body::wrap)))
    }
}

/// The cut of the connection `response` came on.
pub fn cut_of(response: &reqwest::Response) -> Option<Cut> {
    response.extensions().get::<Cut>().cloned()
}
