//! toolmend: repairs Claude tool calls whose input failed to parse.
//!
//! The [`repair`] engine takes one raw tool input and the tool's JSON Schema and answers
//! `valid`, `repaired` (with every edit) or `refused` (with a reason). The sidecar, the offline
//! tools and the hook all hand their calls to it.

pub mod cli;
pub mod demo;
pub mod hook_install;
pub mod offline;
pub mod proxy;
pub mod repair;
pub mod run;
pub mod schema;
pub mod stream;
pub mod telemetry;

/// Installs the TLS crypto provider (ring) the HTTP client uses; call before building any
/// `reqwest` client. Calling it again is harmless.
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
