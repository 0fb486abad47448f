//! The request rewrite: strict injection, then examples injection, on the `tools` entries of a
//! Messages API request, the extra `anthropic-beta` values they need, and the fallback when the
//! API rejects them (the original request, once, and that set is not injected again).

use super::examples::{self, blames_examples, ExamplesPlan};
use super::forward::{send, Upstream};
use super::headers::client_response_headers;
use super::strict::{self, blames_strict_schema, StrictPlan};
use super::tools_rewrite::RequestTools;
use super::App;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde_json::json;

/// A request's rewritten body and what went into it.
pub(crate) struct RequestRewrite {
    pub(crate) body: Bytes,
    betas: Vec<String>,
    strict: Option<StrictPlan>,
    examples: Option<ExamplesPlan>,
}

/// `None` when the request goes out as the client sent it.
pub(crate) fn plan_request(app: &App, body: &[u8]) -> Option<RequestRewrite> {
    let strict_on = app.config.strict.is_enabled();
    if !strict_on && app.examples.is_empty() {
        return None;
    }
    let mut tools = RequestTools::parse(body)?;
    let strict = strict_on.then(|| strict_plan(app, &tools)).flatten();
    if let Some(plan) = &strict {
        tools.apply(&plan.rewrite);
    }
    let examples = examples_plan(app, &tools);
    if let Some(plan) = &examples {
        tools.apply(&plan.rewrite);
    }
    if !tools.is_rewritten() {
        return None;
    }
    let mut betas = Vec::new();
    if let Some(beta) = strict.as_ref().filter(|p| !p.injected.is_empty()).and(app.config.strict.beta.as_ref()) {
        betas.push(beta.clone());
    }
    let examples_beta = &app.config.examples.beta;
    if examples.as_ref().is_some_and(|p| !p.injected.is_empty()) && !examples_beta.is_empty() {
        betas.push(examples_beta.clone());
    }
    Some(RequestRewrite { body: Bytes::from(tools.body()), betas, strict, examples })
}

/// The strict plan for these tools, unless its tool set was rejected before.
fn strict_plan(app: &App, tools: &RequestTools) -> Option<StrictPlan> {
    let adapted = if app.config.strict.is_adaptive() { app.adapted.names() } else { Default::default() };
    let plan = strict::plan(tools, &app.config.strict, &adapted)?;
    if app.rewrite_rejected(plan.rewrite.key) {
        for name in &plan.injected {
            app.metrics.count_strict("not_injected_after_rejection");
            tracing::debug!(tool = %name, "strict injection skipped: the API rejected this tool set before");
        }
        return None;
    }
    for _ in &plan.injected {
        app.metrics.count_strict("injected");
    }
    for _ in &plan.skipped {
        app.metrics.count_strict("skipped");
    }
    if app.first_sight_of_rewrite(plan.rewrite.report_key(&plan.skipped)) {
        if !plan.injected.is_empty() {
            app.record_event("strict_injected", json!({"tools": plan.injected}));
        }
        for (tool, reason) in &plan.skipped {
            app.record_event("strict_skipped", json!({"tool": tool, "reason": reason}));
        }
    }
    Some(plan)
}

/// The examples plan for these tools, unless its set was rejected before.
fn examples_plan(app: &App, tools: &RequestTools) -> Option<ExamplesPlan> {
    if app.examples.is_empty() {
        return None;
    }
    let plan = examples::plan(tools, &app.examples, &app.schemas)?;
    if app.rewrite_rejected(plan.rewrite.key) {
        tracing::debug!("examples injection skipped: the API rejected these examples before");
        return None;
    }
    if app.first_sight_of_rewrite(plan.rewrite.report_key(&plan.skipped)) {
        for (tool, count) in &plan.injected {
            app.record_event("examples_injected", json!({"tool": tool, "examples": count}));
        }
        for skipped in &plan.skipped {
            tracing::info!(tool = %skipped.tool, reason = %skipped.reason, "example input not sent");
            app.record_event(
                "examples_skipped",
                json!({"tool": skipped.tool, "example": skipped.example, "reason": skipped.reason}),
            );
        }
    }
    Some(plan)
}

/// Sends the rewritten request; a 400 that blames what was injected re-issues the original
/// request once, byte-identical, and that set is not injected again.
pub(crate) async fn send_rewritten(
    app: &App,
    method: &Method,
    url: &str,
    headers: &HeaderMap,
    rewrite: &RequestRewrite,
    original: &Bytes,
) -> Result<Upstream, Response> {
    let response = send(app, method, url, with_betas(headers, &rewrite.betas), rewrite.body.clone()).await?;
    if response.status() != StatusCode::BAD_REQUEST {
        return Ok(Upstream::Streaming(response));
    }
    let status = response.status();
    let response_headers = client_response_headers(response.headers(), false);
    let error_body = response.bytes().await.unwrap_or_default();
    let examples = rewrite.examples.as_ref().filter(|p| !p.injected.is_empty() && blames_examples(&error_body));
    let strict = rewrite
        .strict
        .as_ref()
        .filter(|p| examples.is_none() && !p.injected.is_empty() && blames_strict_schema(&error_body));
    if examples.is_none() && strict.is_none() {
        let mut answer = Response::new(Body::from(error_body));
        *answer.status_mut() = status;
        *answer.headers_mut() = response_headers;
        return Ok(Upstream::Read(answer));
    }
    let reason = String::from_utf8_lossy(&error_body).chars().take(500).collect::<String>();
    if let Some(plan) = strict {
        app.reject_rewrite(plan.rewrite.key);
        for _ in &plan.injected {
            app.metrics.count_strict("rejected");
        }
        let dropped = app.drop_adapted(&plan.injected);
        tracing::warn!(tools = ?plan.injected, "the API rejected the strict schemas; re-issuing without injection");
        app.record_event(
            "strict_rejected",
            json!({"tools": plan.injected, "reason": reason, "dropped_from_adapted": dropped}),
        );
    }
    if let Some(plan) = examples {
        app.reject_rewrite(plan.rewrite.key);
        let tools: Vec<&str> = plan.injected.iter().map(|(tool, _)| tool.as_str()).collect();
        tracing::warn!(?tools, "the API rejected the examples; re-issuing without injection");
        app.record_event("examples_rejected", json!({"tools": tools, "reason": reason}));
    }
    send(app, method, url, headers.clone(), original.clone()).await.map(Upstream::Streaming)
}

/// The client's headers with extra `anthropic-beta` values appended (each once): the values
/// of every line the client sent, then the new ones, on one line (a list header's lines mean
/// their values joined; attack round 23 found all but the first line dropped).
fn with_betas(headers: &HeaderMap, betas: &[String]) -> HeaderMap {
    let mut out = headers.clone();
    let lines = headers.get_all("anthropic-beta").iter().filter_map(|v| v.to_str().ok());
    let mut values: Vec<&str> =
        lines.flat_map(|line| line.split(',')).map(str::trim).filter(|v| !v.is_empty()).collect();
    let before = values.len();
    for beta in betas {
        if !values.contains(&beta.as_str()) {
            values.push(beta);
        }
    }
    if values.len() > before {
        if let Ok(value) = HeaderValue::from_str(&values.join(",")) {
            out.insert("anthropic-beta", value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn betas_are_appended_once_and_the_clients_are_kept() {
        let mut headers = HeaderMap::new();
        assert!(with_betas(&headers, &[]).get("anthropic-beta").is_none());
        headers.insert("anthropic-beta", HeaderValue::from_static("a, b"));
        let out = with_betas(&headers, &["b".into(), "c".into()]);
        assert_eq!(out.get("anthropic-beta").unwrap(), "a,b,c");
        assert_eq!(with_betas(&headers, &["a".into()]).get("anthropic-beta").unwrap(), "a, b", "unchanged");
        headers.append("anthropic-beta", HeaderValue::from_static("d"));
        let out = with_betas(&headers, &["c".into()]);
        let lines: Vec<_> = out.get_all("anthropic-beta").iter().collect();
        assert_eq!(lines, ["a,b,d,c"], "every line's values kept");
        assert_eq!(with_betas(&headers, &["d".into()]).get_all("anthropic-beta").iter().count(), 2, "unchanged");
    }
}
