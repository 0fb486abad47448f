//! `[otel]` in the config file, with the standard `OTEL_*` variables over it.

use serde::Deserialize;
use std::collections::BTreeMap;

use super::OtelError;

/// Where and how to send OTLP (HTTP/protobuf). Export is off unless an endpoint is set.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OtelConfig {
    /// The collector's base URL; `/v1/logs` and `/v1/metrics` are appended
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub endpoint: Option<String>,
    /// The full URL for log records (`OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`).
    pub logs_endpoint: Option<String>,
    /// The full URL for metrics (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`).
    pub metrics_endpoint: Option<String>,
    /// Sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`: `key=value,...`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `service.name` of the resource (`OTEL_SERVICE_NAME`), `toolmend` by default.
    pub service_name: Option<String>,
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`: `key=value,...`).
    #[serde(default)]
    pub resource_attributes: BTreeMap<String, String>,
    /// Log records waiting to be sent, at most; past it they are dropped and counted.
    pub queue_capacity: Option<usize>,
    /// How often metrics are sent (`OTEL_METRIC_EXPORT_INTERVAL`), 60000 by default.
    pub metric_export_interval_ms: Option<u64>,
}

pub const DEFAULT_QUEUE_CAPACITY: usize = 2048;

impl OtelConfig {
    pub fn is_enabled(&self) -> bool {
        self.endpoint.is_some() || self.logs_endpoint.is_some() || self.metrics_endpoint.is_some()
    }

    /// The file's values with the standard variables over them; `var` looks a variable up.
    /// `OTEL_SDK_DISABLED=true` turns export off.
    pub fn with_env(mut self, var: impl Fn(&str) -> Option<String>) -> Result<Self, OtelError> {
        let var = |name: &str| var(name).filter(|value| !value.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(Self::default());
        }
        for name in
            ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"]
        {
            if let Some(protocol) = var(name).filter(|p| p.trim() != "http/protobuf") {
                return Err(OtelError::Config(format!(
                    "{name}: '{protocol}' is not supported; toolmend sends http/protobuf"
                )));
            }
        }
        if let Some(endpoint) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            // A general endpoint from the environment beats the file's per-signal ones too.
            self.endpoint = Some(endpoint);
            self.logs_endpoint = None;
            self.metrics_endpoint = None;
        }
        self.logs_endpoint = var("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT").or(self.logs_endpoint);
        self.metrics_endpoint = var("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").or(self.metrics_endpoint);
        if let Some(text) = var("OTEL_EXPORTER_OTLP_HEADERS") {
            self.headers.extend(parse_pairs("OTEL_EXPORTER_OTLP_HEADERS", &text)?);
        }
        if let Some(text) = var("OTEL_RESOURCE_ATTRIBUTES") {
            self.resource_attributes.extend(parse_pairs("OTEL_RESOURCE_ATTRIBUTES", &text)?);
        }
        self.service_name = var("OTEL_SERVICE_NAME").or(self.service_name);
        if let Some(text) = var("OTEL_METRIC_EXPORT_INTERVAL") {
            let ms = text.trim().parse().map_err(|_| {
                OtelError::Config(format!("OTEL_METRIC_EXPORT_INTERVAL: '{text}' is not a number of milliseconds"))
            })?;
            self.metric_export_interval_ms = Some(ms);
        }
        Ok(self)
    }

    /// Every configured endpoint must be an http or https URL.
    pub fn check(&self) -> Result<(), OtelError> {
        let endpoints = [
            ("endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", &self.endpoint),
            ("logs_endpoint", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", &self.logs_endpoint),
            ("metrics_endpoint", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", &self.metrics_endpoint),
        ];
        for (key, variable, value) in endpoints {
            let Some(value) = value else { continue };
            let fine = reqwest::Url::parse(value).is_ok_and(|url| matches!(url.scheme(), "http" | "https"));
            if !fine {
                return Err(OtelError::Config(format!(
                    "{variable} / [otel] {key}: '{value}' is not an http or https URL"
                )));
            }
        }
        Ok(())
    }

    pub(super) fn logs_url(&self) -> Option<String> {
        self.logs_endpoint.clone().or_else(|| self.endpoint.as_deref().map(|base| signal_url(base, "logs")))
    }

    pub(super) fn metrics_url(&self) -> Option<String> {
        self.metrics_endpoint.clone().or_else(|| self.endpoint.as_deref().map(|base| signal_url(base, "metrics")))
    }
}

fn signal_url(base: &str, signal: &str) -> String {
    format!("{}/v1/{signal}", base.trim_end_matches('/'))
}

/// `key=value,key2=value2` with percent-encoded values (the W3C baggage form the spec uses).
fn parse_pairs(variable: &str, text: &str) -> Result<Vec<(String, String)>, OtelError> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                Ok((percent_decode(key.trim()), percent_decode(value.trim())))
            }
            _ => Err(OtelError::Config(format!("{variable}: '{pair}' is not key=value"))),
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes.get(at + 1..at + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[at], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn variables_win_over_the_file() {
        let file: OtelConfig = toml::from_str(
            "endpoint = \"http://file:4318\"\nservice_name = \"from-file\"\nheaders = { a = \"1\" }\n\
             resource_attributes = { team = \"x\" }",
        )
        .unwrap();
        assert_eq!(file.logs_url().as_deref(), Some("http://file:4318/v1/logs"));
        let config = file
            .with_env(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "b=two%20words, a=3"),
                ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci"),
                ("OTEL_SERVICE_NAME", "agents"),
                ("OTEL_METRIC_EXPORT_INTERVAL", "500"),
            ]))
            .unwrap();
        assert_eq!(config.metrics_url().as_deref(), Some("http://127.0.0.1:4318/v1/metrics"));
        assert_eq!(config.headers["a"], "3");
        assert_eq!(config.headers["b"], "two words");
        assert_eq!(config.resource_attributes["team"], "x");
        assert_eq!(config.resource_attributes["deployment.environment"], "ci");
        assert_eq!(config.service_name.as_deref(), Some("agents"));
        assert_eq!(config.metric_export_interval_ms, Some(500));
    }

    #[test]
    fn off_unless_an_endpoint_is_set() {
        assert!(!OtelConfig::default().with_env(env(&[("OTEL_SERVICE_NAME", "x")])).unwrap().is_enabled());
        let on = OtelConfig::default().with_env(env(&[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://h/l")])).unwrap();
        assert!(on.is_enabled());
        assert_eq!(on.logs_url().as_deref(), Some("http://h/l"));
        assert_eq!(on.metrics_url(), None);
        let disabled = OtelConfig { endpoint: Some("http://h".into()), ..OtelConfig::default() }
            .with_env(env(&[("OTEL_SDK_DISABLED", "true")]))
            .unwrap();
        assert!(!disabled.is_enabled());
    }

    #[test]
    fn bad_values_name_the_variable() {
        let error = OtelConfig::default().with_env(env(&[("OTEL_EXPORTER_OTLP_HEADERS", "novalue")])).unwrap_err();
        assert!(error.to_string().contains("OTEL_EXPORTER_OTLP_HEADERS: 'novalue'"), "{error}");
        let error = OtelConfig::default().with_env(env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])).unwrap_err();
        assert!(error.to_string().contains("http/protobuf"), "{error}");
        let config = OtelConfig { metrics_endpoint: Some("ftp://collector".into()), ..OtelConfig::default() };
        let error = config.check().unwrap_err().to_string();
        assert!(error.contains("[otel] metrics_endpoint: 'ftp://collector'"), "{error}");
        assert!(OtelConfig { endpoint: Some("http://127.0.0.1:4318".into()), ..OtelConfig::default() }.check().is_ok());
        let error = toml::from_str::<OtelConfig>("endpoit = \"x\"").unwrap_err().to_string();
        assert!(error.contains("endpoit"), "{error}");
    }
}
