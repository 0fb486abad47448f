//! The latency bench's other parts on loopback, each on its own runtime thread: an upstream that
//! drains the request and streams a fixed SSE body, the anchor (a minimal pass-through proxy,
//! hyper, no parsing), and nginx as a proxy when it is installed.

use axum::body::Body;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn bind() -> std::net::TcpListener {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    listener
}

/// Runs `serve` on a runtime of its own, in a thread that lives as long as the bench.
fn on_own_runtime<F: std::future::Future<Output = ()> + Send + 'static>(serve: F) {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(serve);
    });
}

/// An upstream that reads each request to its end and answers `sse` in `chunk_size` pieces,
/// `delay` apart. Nothing is recorded: the realistic requests are ~450 KB each.
pub fn upstream(sse: &'static [u8], chunk_size: usize, delay: Duration) -> String {
    let listener = bind();
    let addr = listener.local_addr().unwrap();
    on_own_runtime(async move {
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| async move {
            let _ = axum::body::to_bytes(request.into_body(), 64 << 20).await;
            let chunks = sse.chunks(chunk_size).map(|c| Ok::<_, std::io::Error>(Bytes::from_static(c)));
            let body = Body::from_stream(futures_util::StreamExt::then(
                futures_util::stream::iter(chunks),
                move |c| async move {
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    c
                },
            ));
            axum::response::Response::builder().header("content-type", "text/event-stream").body(body).unwrap()
        });
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}")
}

/// The anchor: every request passed to `upstream` as it comes (streamed both ways, headers as
/// they are), nothing parsed.
pub fn pass_through_proxy(upstream: &str) -> String {
    let upstream: SocketAddr = upstream.trim_start_matches("http://").parse().unwrap();
    let listener = bind();
    let addr = listener.local_addr().unwrap();
    on_own_runtime(async move {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client: Client<HttpConnector, Incoming> =
            Client::builder(TokioExecutor::new()).pool_max_idle_per_host(4096).build(connector);
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let client = client.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    let client = client.clone();
                    async move {
                        let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
                        *request.uri_mut() = format!("http://{upstream}{path}").parse().unwrap();
                        client.request(request).await
                    }
                });
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    format!("http://{addr}")
}

/// nginx in front of `upstream`: one worker, `proxy_buffering off`, request bodies kept in
/// memory. `None` when nginx is not installed.
pub struct Nginx {
    child: Child,
    pub url: String,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Nginx {
    pub fn start(upstream: &str) -> Option<Self> {
        let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].into_iter().find(|p| std::path::Path::new(p).exists())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("toolmend-bench-nginx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = TempDir(dir);
        let upstream = upstream.trim_start_matches("http://");
        let conf = format!(
            "worker_processes 1;\ndaemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log error;\n\
             events {{ worker_connections 8192; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
             client_max_body_size 64m;\n  client_body_buffer_size 1m;\n\
             upstream fake {{ server {upstream}; keepalive 1024; }}\n\
             server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://fake;\n\
             proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_buffering off;\n\
             tcp_nodelay on;\n    }}\n  }}\n}}\n",
            d = dir.0.display()
        );
        let conf_path = dir.0.join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(binary)
            .args(["-c", conf_path.to_str().unwrap(), "-p", dir.0.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut nginx = Self { child, url: format!("http://127.0.0.1:{port}"), _dir: dir };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(nginx);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = nginx.child.kill();
        None
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The anchor with reqwest as its upstream client (the client toolmend uses), for telling the
/// client's share of the time added from toolmend's own.
pub fn reqwest_pass_through_proxy(upstream: &str) -> String {
    let upstream = upstream.to_string();
    let listener = bind();
    let addr = listener.local_addr().unwrap();
    on_own_runtime(async move {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let (client, upstream) = (client.clone(), upstream.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                    let (client, upstream) = (client.clone(), upstream.clone());
                    async move {
                        let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
                        let (parts, body) = request.into_parts();
                        let body = reqwest::Body::wrap(body);
                        let response = client
                            .request(parts.method, format!("{upstream}{path}"))
                            .headers(parts.headers)
                            .body(body)
                            .send()
                            .await
                            .unwrap();
                        let mut out = hyper::Response::builder().status(response.status());
                        *out.headers_mut().unwrap() = response.headers().clone();
                        Ok::<_, std::convert::Infallible>(out.body(Body::from_stream(response.bytes_stream())).unwrap())
                    }
                });
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    format!("http://{addr}")
}

/// The anchor in a process of its own, as toolmend and nginx are: the same code run by this
/// bench binary started again with `LATENCY_ANCHOR_CHILD` set. It stops when its stdin closes
/// (the bench ended) or when dropped.
pub struct AnchorProcess {
    child: Child,
    pub url: String,
}

const ANCHOR_CHILD: &str = "LATENCY_ANCHOR_CHILD";

impl AnchorProcess {
    pub fn start(upstream: &str) -> Self {
        use std::io::BufRead;
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(ANCHOR_CHILD, upstream)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting the anchor process");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Self { child, url: line.trim().to_string() }
    }
}

impl Drop for AnchorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// In the anchor's child process: serves the anchor, prints its URL and exits when stdin
/// closes. Returns at once in the bench itself.
pub fn serve_if_anchor_child() {
    let Ok(upstream) = std::env::var(ANCHOR_CHILD) else { return };
    let url = pass_through_proxy(&upstream);
    println!("{url}");
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
    std::process::exit(0);
}
