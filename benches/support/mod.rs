//! A `toolmend serve` child process for the benches that measure the real binary.
// Each bench uses the part it needs.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Sidecar {
    child: Child,
    pub url: String,
}

impl Sidecar {
    pub fn start(upstream: &str) -> Self {
        Self::start_with(upstream, &[("TOOLMEND_LOG", "warn")])
    }

    /// A sidecar whose process gets these extra environment variables.
    pub fn start_with(upstream: &str, env: &[(&str, &str)]) -> Self {
        // TOOLMEND_BIN measures another build (an allocator comparison, BENCHMARKS.md).
        let binary = std::env::var("TOOLMEND_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_toolmend").to_string());
        Self::spawn(&binary, upstream, env)
    }

    /// A sidecar from another build of the binary.
    pub fn start_binary(binary: &str, upstream: &str) -> Self {
        Self::spawn(binary, upstream, &[("TOOLMEND_LOG", "warn")])
    }

    fn spawn(binary: &str, upstream: &str, env: &[(&str, &str)]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new(binary)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--upstream", upstream])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting toolmend serve");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Self { child, url: format!("http://127.0.0.1:{port}") };
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("toolmend serve did not start");
    }

    /// Resident memory of the sidecar, KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
