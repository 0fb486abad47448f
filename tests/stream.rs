//! The stream state machine on recorded SSE streams: bytes in, bytes out, no sockets.

use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use toolmend::repair::Status;
use toolmend::schema::ToolCatalog;
use toolmend::stream::{parse_frame, Decision, FrameSplitter, StreamOptions, StreamRepairer};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/fixtures/sse/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn search_tools() -> Arc<ToolCatalog> {
    let tools = json!([{"name": "search", "input_schema": {
        "type": "object",
        "properties": {
            "jurisdiction": {"type": "string", "enum": ["se", "no", "dk", "fi"]},
            "terms": {"type": "array", "items": {"type": "string"}},
            "limit": {"type": "integer", "minimum": 1}
        },
        "required": ["jurisdiction", "terms"],
        "additionalProperties": false
    }}]);
    Arc::new(ToolCatalog::from_value(&tools).unwrap())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run_chunked(input: &[u8], chunks: &[usize], options: StreamOptions) -> (Vec<u8>, Vec<Decision>) {
    let mut machine = StreamRepairer::new(search_tools(), options);
    let (mut out, mut decisions) = (Vec::new(), Vec::new());
    let mut rest = input;
    for &size in chunks.iter().chain(std::iter::repeat(&usize::MAX)) {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        let step = machine.feed(chunk);
        out.extend(step.chunks.concat());
        decisions.extend(step.decisions);
        rest = tail;
    }
    let step = machine.finish();
    out.extend(step.chunks.concat());
    decisions.extend(step.decisions);
    (out, decisions)
}

fn run(input: &[u8]) -> (Vec<u8>, Vec<Decision>) {
    run_chunked(input, &[], StreamOptions::default())
}

fn frames(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut splitter = FrameSplitter::default();
    let mut frames = Vec::new();
    splitter.push(bytes, &mut frames);
    frames.iter().map(|frame| frame.to_vec()).collect()
}

fn data(frame: &[u8]) -> Value {
    serde_json::from_str(parse_frame(frame).data.as_deref().unwrap_or("null")).unwrap_or_default()
}

/// What the CLI builds: per block index, every input_json_delta appended.
fn tool_inputs(bytes: &[u8]) -> BTreeMap<u64, String> {
    let mut inputs = BTreeMap::new();
    for frame in frames(bytes) {
        let data = data(&frame);
        if data["delta"]["type"] == "input_json_delta" {
            let entry: &mut String = inputs.entry(data["index"].as_u64().unwrap()).or_default();
            entry.push_str(data["delta"]["partial_json"].as_str().unwrap());
        }
    }
    inputs
}

/// Frames other than tool input deltas, in order.
fn other_frames(bytes: &[u8]) -> Vec<Vec<u8>> {
    frames(bytes).into_iter().filter(|f| data(f)["delta"]["type"] != "input_json_delta").collect()
}

#[test]
fn streams_without_tool_errors_pass_byte_identical() {
    for name in ["valid-tool.sse", "text-only.sse"] {
        let input = fixture(name);
        let (out, decisions) = run(&input);
        assert_eq!(text(&out), text(&input), "{name}");
        assert!(decisions.iter().all(|d| d.outcome.status == Status::Valid));
    }
}

#[test]
fn the_seed_call_is_reissued_repaired_and_nothing_else_changes() {
    let input = fixture("seed-malformed.sse");
    let (out, decisions) = run(&input);
    let repaired: Value = serde_json::from_str(&tool_inputs(&out)[&1]).unwrap();
    assert_eq!(repaired, json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}));
    let deltas = frames(&out).iter().filter(|f| data(f)["delta"]["type"] == "input_json_delta").count();
    assert_eq!(deltas, 1, "the repaired call is one delta");
    assert_eq!(other_frames(&out), other_frames(&input), "every other frame, in order");
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].outcome.status, Status::Repaired);
    assert_eq!(decisions[0].tool_use_id, "toolu_seed");
    assert_eq!(decisions[0].stop_reason.as_deref(), Some("tool_use"));
}

#[test]
fn a_repair_keeps_the_id_retry_and_comment_lines_of_the_deltas_it_replaces() {
    // Attack round 23: a client's last event id and retry delay come from these lines.
    let seed = text(&fixture("seed-malformed.sse"));
    let mut count = 0;
    let input: String = seed
        .split_inclusive("\n\n")
        .map(|frame| match frame.contains("input_json_delta") {
            true => {
                count += 1;
                frame.replacen("data: ", &format!("id: evt-{count}\n: trace\ndata: "), 1)
            }
            false => frame.to_string(),
        })
        .collect();
    let (out, decisions) = run(input.as_bytes());
    assert_eq!(decisions[0].outcome.status, Status::Repaired);
    let out = text(&out);
    let ids: Vec<&str> = out.lines().filter(|line| line.starts_with("id: ")).collect();
    let expected: Vec<String> = (1..=count).map(|n| format!("id: evt-{n}")).collect();
    assert_eq!(ids, expected, "every id line, in order");
    let last_id = out.rfind(&format!("id: evt-{count}")).unwrap();
    assert!(last_id < out.find("input_json_delta").unwrap(), "before the repaired delta");
    assert_eq!(out.matches(": trace").count(), count);
}

#[test]
fn refused_and_cut_calls_go_out_exactly_as_they_came() {
    for (name, code) in [("refused-tool.sse", "schema_mismatch"), ("max-tokens-cut.sse", "truncated")] {
        let input = fixture(name);
        let (out, decisions) = run(&input);
        assert_eq!(text(&out), text(&input), "{name}");
        assert_eq!(decisions.len(), 1);
        assert_eq!(decisions[0].outcome.status, Status::Refused);
        assert_eq!(decisions[0].outcome.reason.as_ref().unwrap().code.as_str(), code);
    }
}

#[test]
fn parallel_tool_blocks_keep_their_order() {
    let input = fixture("parallel-tools.sse");
    let (out, decisions) = run(&input);
    let inputs = tool_inputs(&out);
    assert_eq!(
        serde_json::from_str::<Value>(&inputs[&1]).unwrap(),
        json!({"jurisdiction": "no", "terms": ["fjord", "cabin"], "limit": 3})
    );
    assert_eq!(inputs[&2], r#"{"jurisdiction": "dk", "terms": ["smorrebrod"]}"#);
    let order: Vec<(String, u64)> = frames(&out)
        .iter()
        .filter_map(|f| Some((parse_frame(f).event?.to_string(), data(f)["index"].as_u64()?)))
        .filter(|(event, _)| event != "content_block_delta")
        .collect();
    let expected_order: Vec<(String, u64)> = frames(&input)
        .iter()
        .filter_map(|f| Some((parse_frame(f).event?.to_string(), data(f)["index"].as_u64()?)))
        .filter(|(event, _)| event != "content_block_delta")
        .collect();
    assert_eq!(order, expected_order);
    let statuses: Vec<Status> = decisions.iter().map(|d| d.outcome.status).collect();
    assert_eq!(statuses, [Status::Valid, Status::Repaired]);
}

#[test]
fn an_error_event_or_the_end_inside_a_held_block_flushes_it_unchanged() {
    let input = fixture("seed-malformed.sse");
    let recorded = text(&input);
    let cut_at =
        recorded.find("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}").unwrap();
    let error = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    for tail in ["", error] {
        let stream = format!("{}{tail}", &recorded[..cut_at]);
        let (out, decisions) = run(stream.as_bytes());
        assert_eq!(text(&out), stream, "tail {tail:?}");
        assert_eq!(decisions[0].outcome.status, Status::Refused);
    }
}

#[test]
fn a_block_over_the_hold_limit_passes_through_unchanged() {
    let input = fixture("seed-malformed.sse");
    let options = StreamOptions { max_held_bytes: 200, ..StreamOptions::default() };
    let (out, decisions) = run_chunked(&input, &[], options);
    assert_eq!(text(&out), text(&input));
    assert_eq!(decisions[0].outcome.reason.as_ref().unwrap().code.as_str(), "too_large");
}

#[test]
fn a_valid_block_over_the_hold_limit_passes_through_and_is_reported_valid() {
    use toolmend::demo::script::tool_message;
    let terms: Vec<String> = (0..40).map(|i| format!("term number {i}")).collect();
    let raw = json!({"jurisdiction": "se", "terms": terms}).to_string();
    let input = tool_message("toolu_big", "search", &raw, 16);
    let options = StreamOptions { max_held_bytes: 300, ..StreamOptions::default() };
    for chunks in [vec![], vec![7, 50, 3]] {
        let (out, decisions) = run_chunked(input.as_bytes(), &chunks, options.clone());
        assert_eq!(text(&out), input, "passed through byte for byte");
        assert_eq!(decisions.len(), 1);
        assert_eq!(decisions[0].outcome.status, Status::Valid, "{:?}", decisions[0].outcome.reason);
        assert_eq!(decisions[0].raw, raw);
    }
}

#[test]
fn text_goes_out_at_once_and_a_ping_inside_a_tool_block_keeps_its_place() {
    let input = fixture("seed-malformed.sse");
    let text = String::from_utf8(input).unwrap();
    let tool_start = text.find("\"type\":\"tool_use\"").unwrap();
    let ping_end = text.find("event: ping").unwrap() + "event: ping\ndata: {\"type\":\"ping\"}\n\n".len();
    let mut machine = StreamRepairer::new(search_tools(), StreamOptions::default());
    let step = machine.feed(&text.as_bytes()[..ping_end]);
    assert!(machine.is_holding());
    let out = String::from_utf8(step.chunks.concat()).unwrap();
    assert!(out.len() > tool_start, "text and the tool block's start went out");
    assert!(!out.contains("input_json_delta") && !out.contains("event: ping"), "{out}");
    let (repaired, _) = run(text.as_bytes());
    let repaired = String::from_utf8(repaired).unwrap();
    assert!(repaired.find("event: ping").unwrap() < repaired.find("input_json_delta").unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any split of a recorded stream into chunks gives the same bytes as the unsplit stream.
    #[test]
    fn chunking_never_changes_the_output(
        name in prop::sample::select(vec!["seed-malformed.sse", "parallel-tools.sse", "valid-tool.sse", "max-tokens-cut.sse", "refused-tool.sse"]),
        chunks in prop::collection::vec(1usize..64, 1..200),
        ending in prop::sample::select(vec!["\n", "\r", "\r\n"]),
    ) {
        let input = text(&fixture(name)).replace('\n', ending).into_bytes();
        let (whole, _) = run(&input);
        let (split, _) = run_chunked(&input, &chunks, StreamOptions::default());
        prop_assert_eq!(text(&whole), text(&split));
    }
}

/// `valid-tool.sse` with its tool input streamed as the given deltas (JSON string bodies, so
/// escapes such as a lone `\ud83d` stay as written), a ping among them.
fn stream_with_input_deltas(pieces: &[&str]) -> String {
    let recorded = text(&fixture("valid-tool.sse"));
    let first_delta =
        recorded.find("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1").unwrap();
    let stop = recorded.find("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}").unwrap();
    let mut deltas: Vec<String> = pieces
        .iter()
        .map(|piece| {
            format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{piece}\"}}}}\n\n")
        })
        .collect();
    deltas.insert(1, "event: ping\ndata: {\"type\":\"ping\"}\n\n".to_string());
    format!("{}{}{}", &recorded[..first_delta], deltas.concat(), &recorded[stop..])
}

#[test]
fn an_unreadable_frame_inside_a_held_block_never_overtakes_it() {
    // A surrogate pair split over two deltas: legal for JavaScript, rejected by serde_json.
    for pieces in [
        [r#"{\"jurisdiction\": \"se\", "#, r#"\"terms\": [\"smile \ud83d"#, r#"\ude00\"]}"#],
        [r#"{\"jurisdiction\": \"se\", "#, r#"\"terms\": smile \ud83d"#, r#"\ude00 payout}"#],
    ] {
        let input = stream_with_input_deltas(&pieces);
        for chunks in [vec![], vec![7], vec![61, 3]] {
            let (out, decisions) = run_chunked(input.as_bytes(), &chunks, StreamOptions::default());
            assert_eq!(text(&out), input, "{pieces:?} in chunks of {chunks:?}");
            assert_eq!(decisions.len(), 1);
            assert_eq!(decisions[0].outcome.status, Status::Refused);
        }
    }
}

#[test]
fn cr_only_and_crlf_streams_are_read_and_repaired() {
    let input = text(&fixture("seed-malformed.sse"));
    for ending in ["\r", "\r\n"] {
        let converted = input.replace('\n', ending);
        let (out, decisions) = run_chunked(converted.as_bytes(), &[5], StreamOptions::default());
        assert_eq!(decisions.len(), 1, "{ending:?}");
        assert_eq!(decisions[0].outcome.status, Status::Repaired, "{ending:?}");
        let repaired: Value = serde_json::from_str(&tool_inputs(&out)[&1]).unwrap();
        assert_eq!(repaired, json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}));
        assert_eq!(other_frames(&out), other_frames(converted.as_bytes()), "{ending:?}: every other frame, in order");
    }
}

#[test]
fn each_frame_of_a_cr_only_stream_goes_out_when_its_blank_line_comes() {
    // Not when the next frame's first byte comes (attack round 21): a frame's `\r` blank line
    // may be followed by `\n` (`\r\n`), and the wait for it held every frame back.
    for ending in ["\r", "\r\n"] {
        let input = text(&fixture("text-only.sse")).replace('\n', ending);
        let mut machine = StreamRepairer::new(search_tools(), StreamOptions::default());
        let mut out = Vec::new();
        for frame in input.split_inclusive(&format!("{ending}{ending}")) {
            for piece in [&frame[..frame.len() - 1], &frame[frame.len() - 1..]] {
                out.extend(machine.feed(piece.as_bytes()).chunks.concat());
            }
            if ending == "\r" {
                assert_eq!(text(&out), input[..out.len()], "nothing held");
                assert!(text(&out).ends_with(frame), "{frame:?} went out at its blank line");
            }
        }
        out.extend(machine.finish().chunks.concat());
        assert_eq!(text(&out), input, "{ending:?}: every byte, as it came");
    }
}

#[test]
fn json_that_breaks_the_schema_is_coerced_or_goes_out_unchanged_as_invalid() {
    use toolmend::demo::script::tool_message;
    let stringified = tool_message("toolu_s", "search", r#"{"jurisdiction": "se", "terms": "[\"payout\"]"}"#, 7);
    let (out, decisions) = run(stringified.as_bytes());
    let repaired: Value = serde_json::from_str(&tool_inputs(&out)[&1]).unwrap();
    assert_eq!(repaired, json!({"jurisdiction": "se", "terms": ["payout"]}));
    assert_eq!(decisions[0].outcome.status, Status::Repaired);
    assert_eq!(other_frames(&out), other_frames(stringified.as_bytes()), "every other frame, in order");

    let off_enum = tool_message("toolu_i", "search", r#"{"jurisdiction": "us", "terms": ["payout"]}"#, 7);
    let (out, decisions) = run(off_enum.as_bytes());
    assert_eq!(text(&out), off_enum, "handed on byte for byte");
    assert_eq!(decisions[0].outcome.status, Status::Invalid);
}

#[test]
fn a_message_delta_naming_no_stop_reason_releases_the_held_block_unchanged() {
    let recorded = text(&fixture("seed-malformed.sse"));
    let named = r#""delta":{"stop_reason":"tool_use","stop_sequence":null}"#;
    assert!(recorded.contains(named));
    for delta in [r#""delta":{"stop_reason":null,"stop_sequence":null}"#, r#""delta":{"stop_sequence":null}"#] {
        let input = recorded.replace(named, delta);
        for chunks in [vec![], vec![9]] {
            let (out, decisions) = run_chunked(input.as_bytes(), &chunks, StreamOptions::default());
            assert_eq!(text(&out), input, "{delta}: handed on byte for byte");
            assert_eq!(decisions.len(), 1);
            assert_eq!(decisions[0].outcome.status, Status::Refused, "{delta}");
            assert_eq!(decisions[0].outcome.reason.as_ref().unwrap().code.as_str(), "truncated", "{delta}");
            assert_eq!(decisions[0].stop_reason, None);
        }
    }
}

/// The seed's malformed call with `frame` placed after its input delta that ends in `after`.
fn seed_with_frame_after(after: &str, frame: &str) -> String {
    let recorded = text(&fixture("seed-malformed.sse"));
    let delta = recorded.find(after).unwrap();
    let at = delta + recorded[delta..].find("\n\n").unwrap() + 2;
    format!("{}{frame}{}", &recorded[..at], &recorded[at..])
}

fn delta_frame(name: &str, kind: &str, index: u64, partial_json: &str) -> String {
    let data =
        json!({"type": kind, "index": index, "delta": {"type": "input_json_delta", "partial_json": partial_json}});
    format!("event: {name}\ndata: {data}\n\n")
}

#[test]
fn a_frame_whose_name_and_type_disagree_releases_the_held_block_unchanged() {
    // Round 7 S1: the SDKs pass a frame on by its name and read it by its `type`: a delta typed
    // `ping` is dropped by the client, a stop typed as a delta is applied as one. toolmend must
    // neither take the first one's text as input nor end the block at the second one.
    for frame in [
        delta_frame("content_block_delta", "ping", 1, "; echo INJECTED"),
        delta_frame("content_block_delta", "content_block_stop", 1, "; echo INJECTED"),
        delta_frame("content_block_stop", "content_block_delta", 1, "/cache"),
        delta_frame("content_block_delta", "content_block_delta", 7, "x"),
        delta_frame("message_start", "content_block_delta", 1, "x"),
        delta_frame("content_block_delta_v2", "content_block_delta", 1, "x"),
        "event: content_block_delta\ndata: {}\n\n".to_string(),
    ] {
        let input = seed_with_frame_after("\"se\\\", \\\"ter", &frame);
        let (out, decisions) = run(input.as_bytes());
        assert_eq!(text(&out), input, "{frame}");
        assert!(decisions.iter().all(|d| d.outcome.status != Status::Repaired), "{frame}: {decisions:?}");
    }
}

#[test]
fn a_frame_that_is_not_utf8_inside_a_held_block_never_overtakes_it() {
    // Round 7 S2: the CLI decodes such a frame leniently and applies its delta.
    let input = seed_with_frame_after("\"se\\\", \\\"ter", "");
    let at = input.find("event: ping").unwrap();
    let mut bytes = input.as_bytes()[..at].to_vec();
    bytes.extend_from_slice(b"event: content_block_delta\n: \xff\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"x\"}}\n\n");
    bytes.extend_from_slice(&input.as_bytes()[at..]);
    let (out, decisions) = run(&bytes);
    assert_eq!(out, bytes);
    assert!(decisions.iter().all(|d| d.outcome.status != Status::Repaired), "{decisions:?}");
}

#[test]
fn a_stop_reason_is_read_only_from_a_frame_typed_message_delta() {
    // Round 7 S1b: a `message_delta` typed `ping` (which clients drop) naming `tool_use` before
    // the real `max_tokens` must not lift the truncation guard.
    let cut =
        text(&fixture("seed-malformed.sse")).replace("\"stop_reason\":\"tool_use\"", "\"stop_reason\":\"max_tokens\"");
    let spoof = "event: message_delta\ndata: {\"type\":\"ping\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n";
    let at = cut.find("event: message_delta").unwrap();
    let input = format!("{}{spoof}{}", &cut[..at], &cut[at..]);
    let (out, decisions) = run(input.as_bytes());
    assert_eq!(text(&out), input);
    assert!(decisions.iter().all(|d| d.outcome.status != Status::Repaired), "{decisions:?}");
}

#[test]
fn frames_inside_a_held_block_keep_their_place_in_a_valid_stream() {
    // Round 7 V1, S3: a comment, an unknown event, another block's delta, another block's start
    // or the same index opened again inside a held block: the stream comes out byte for byte.
    let valid = text(&fixture("valid-tool.sse"));
    let first_delta =
        valid.find("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1").unwrap();
    let at = first_delta + valid[first_delta..].find("\n\n").unwrap() + 2;
    let text_delta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n";
    let start = |index: u64, kind: &str| {
        let block = if kind == "tool_use" {
            json!({"type": "tool_use", "id": "toolu_b", "name": "search", "input": {}})
        } else {
            json!({"type": kind, "text": ""})
        };
        format!(
            "event: content_block_start\ndata: {}\n\n",
            json!({"type": "content_block_start", "index": index, "content_block": block})
        )
    };
    for frame in [
        ": a comment\n\n".to_string(),
        "event: future_event\ndata: {\"type\":\"future_event\"}\n\n".to_string(),
        text_delta.to_string(),
        start(2, "text"),
        start(1, "tool_use"),
    ] {
        let input = format!("{}{frame}{}", &valid[..at], &valid[at..]);
        let (out, _) = run(input.as_bytes());
        assert_eq!(text(&out), input, "{frame}");
    }
}

#[test]
fn a_comment_inside_a_held_block_keeps_its_place_and_the_call_is_still_repaired() {
    let input = seed_with_frame_after("\"se\\\", \\\"ter", ": keep-alive\n\n");
    let (out, decisions) = run(input.as_bytes());
    let out = text(&out);
    assert_eq!(decisions[0].outcome.status, Status::Repaired);
    assert!(out.find(": keep-alive").unwrap() < out.find("input_json_delta").unwrap(), "{out}");
}

fn with_hold_limit(max_held_bytes: usize) -> StreamOptions {
    StreamOptions { max_held_bytes, ..StreamOptions::default() }
}

#[test]
fn what_waits_behind_a_block_is_bounded_by_the_hold_limit() {
    // Round 7 D1: text (or pings, or a frame that never ends) after or inside a held block may
    // not grow the held bytes without bound: past the limit all of it goes out as it came.
    let seed = text(&fixture("seed-malformed.sse"));
    let text_block = |n: usize| {
        let delta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"xxxxxxxxxxxxxxxxxxxx\"}}\n\n";
        format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n{}event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":2}}\n\n", delta.repeat(n))
    };
    let after_stop = seed.find("event: message_delta").unwrap();
    let in_block = seed.find("event: ping").unwrap();
    let ping = "event: ping\ndata: {\"type\":\"ping\"}\n\n";
    let endless = format!("event: content_block_delta\ndata: {}", "x".repeat(5000));
    for (input, repaired_below_limit) in [
        (format!("{}{}{}", &seed[..after_stop], text_block(100), &seed[after_stop..]), true),
        (format!("{}{}{}", &seed[..in_block], ping.repeat(100), &seed[in_block..]), true),
        (format!("{}{endless}", &seed[..in_block]), false),
    ] {
        for chunks in [vec![], vec![7]] {
            let (out, decisions) = run_chunked(input.as_bytes(), &chunks, with_hold_limit(2000));
            assert_eq!(text(&out), input, "in chunks of {chunks:?}");
            assert!(decisions.iter().all(|d| d.outcome.status == Status::Refused), "{decisions:?}");
        }
        let (_, decisions) = run_chunked(input.as_bytes(), &[], with_hold_limit(1 << 20));
        let repaired = decisions.iter().any(|d| d.outcome.status == Status::Repaired);
        assert_eq!(repaired, repaired_below_limit, "{decisions:?}");
    }
}

/// Frames that name no block by a numeric `index` were read as block 0's: an index-less
/// `search` block's input was repaired and re-sent as block 0, where another tool's call was
/// open (attack round 12-S, c31), and an index-less delta was taken into block 0's input
/// (c30). Such a stream now goes through as it came, as it would without toolmend.
#[test]
fn frames_without_an_index_pass_as_they_came() {
    let start = |index: &str, id: &str| {
        format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",{index}\"content_block\":{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"search\",\"input\":{{}}}}}}\n\n"
        )
    };
    let delta = |index: &str, json: &str| {
        format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",{index}\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{}}}}}\n\n",
            serde_json::to_string(json).unwrap()
        )
    };
    let stop = |index: &str| format!("event: content_block_stop\ndata: {{\"type\":\"content_block_stop\"{index}}}\n\n");
    let end = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let seed = r#"{"jurisdiction": "se", "terms": token machine payout percentage}"#;
    let streams = [
        // An index-less block beside block 0.
        format!(
            "{}{}{}{}{}{end}",
            start("\"index\":0,", "a"),
            start("", "b"),
            delta("", seed),
            stop(""),
            stop(",\"index\":0")
        ),
        // An index-less delta inside block 0.
        format!(
            "{}{}{}{}{end}",
            start("\"index\":0,", "a"),
            delta("\"index\":0,", "{\"jurisdiction\": \"se\", "),
            delta("", "\"terms\": token machine}"),
            stop(",\"index\":0")
        ),
        // No frame has an index.
        format!("{}{}{}{end}", start("", "a"), delta("", seed), stop("")),
    ];
    for stream in streams {
        let (out, decisions) = run(stream.as_bytes());
        assert_eq!(text(&out), stream);
        assert!(decisions.iter().all(|d| d.outcome.status != Status::Repaired), "{decisions:?}");
    }
    // The same stream with its indexes is repaired: the test above is not vacuous.
    let indexed = format!("{}{}{}{end}", start("\"index\":0,", "a"), delta("\"index\":0,", seed), stop(",\"index\":0"));
    let (_, decisions) = run(indexed.as_bytes());
    assert!(decisions.iter().any(|d| d.outcome.status == Status::Repaired), "{decisions:?}");
}

/// Attack round 14's streams (fixtures/sse/attack14): a block index used again after its stop
/// (clients put the second block at position 1, so its repair would land on the first), a
/// second `message_delta` whose stop reason clients keep (`max_tokens` after `tool_use`), the
/// same hidden in a frame typed twice, a block start hidden in a frame typed twice, and the
/// second pass's streams. Each goes out exactly as it came, with nothing repaired.
#[test]
fn streams_whose_blocks_or_stop_reason_clients_read_otherwise_pass_unchanged() {
    let query = json!({"type": "object", "properties": {"query": {"type": "string"}},
        "required": ["query"], "additionalProperties": false});
    let command = json!({"type": "object", "properties": {"command": {"type": "string"}},
        "required": ["command"], "additionalProperties": false});
    let deploy = json!({"type": "object", "properties": {"env": {"type": "string", "enum": ["staging", "production"]},
        "dry_run": {"type": "boolean"}}, "required": ["env"], "additionalProperties": false});
    let tools = json!([
        {"name": "run_sql", "input_schema": query},
        {"name": "preview_sql", "input_schema": query},
        {"name": "Bash", "input_schema": command},
        {"name": "deploy", "input_schema": deploy},
    ]);
    let tools = Arc::new(ToolCatalog::from_value(&tools).unwrap());
    for name in [
        "f1_index_reuse",
        "f2_two_message_deltas",
        "f2b_hidden_message_delta",
        "f3_hidden_start",
        "f3b_hidden_start_message_start",
        // The second pass on those fixes: frames under the delta name (a block start, the
        // message start, a stop reason), a delta after its block's stop, frames after
        // `message_stop`, an untyped `message_stop`.
        "a1_start_under_delta_name",
        "g1_message_start_under_delta_name",
        "b1_stop_reason_under_delta_name",
        "e1_delta_after_block_stop",
        "e2_delta_after_message_stop",
        "c1_message_delta_after_stop",
        "d1_empty_message_stop",
    ] {
        let input = fixture(&format!("attack14/{name}.sse"));
        for chunks in [vec![], vec![1], vec![37, 5]] {
            let mut machine = StreamRepairer::new(tools.clone(), StreamOptions::default());
            let (mut out, mut decisions) = (Vec::new(), Vec::new());
            for piece in input.chunks(chunks.first().copied().unwrap_or(input.len())) {
                let step = machine.feed(piece);
                out.extend(step.chunks.concat());
                decisions.extend(step.decisions);
            }
            let step = machine.finish();
            out.extend(step.chunks.concat());
            decisions.extend(step.decisions);
            assert_eq!(text(&out), text(&input), "{name} in chunks of {chunks:?}");
            assert!(decisions.iter().all(|d| d.outcome.status != Status::Repaired), "{name}: {decisions:?}");
        }
    }
}

/// The controls: the same shapes numbered and stopped as clients read them are repaired.
#[test]
fn a_second_tool_block_at_its_position_and_one_stop_reason_are_repaired() {
    let input = text(&fixture("attack14/f1_index_reuse.sse"));
    // The second block at index 1, where clients put it.
    let second = input.rfind("event: content_block_start").unwrap();
    let fixed = format!("{}{}", &input[..second], input[second..].replace("\"index\": 0", "\"index\": 1"));
    let query = json!({"type": "object", "properties": {"query": {"type": "string"}},
        "required": ["query"], "additionalProperties": false});
    let tools = json!([{"name": "run_sql", "input_schema": query}, {"name": "preview_sql", "input_schema": query}]);
    let mut machine = StreamRepairer::new(Arc::new(ToolCatalog::from_value(&tools).unwrap()), StreamOptions::default());
    let mut step = machine.feed(fixed.as_bytes());
    let end = machine.finish();
    step.chunks.extend(end.chunks);
    step.decisions.extend(end.decisions);
    let out = step.chunks.concat();
    let repaired: Vec<_> = step.decisions.iter().filter(|d| d.outcome.status == Status::Repaired).collect();
    assert_eq!(repaired.len(), 1, "{fixed}");
    assert_eq!(repaired[0].tool, "preview_sql");
    assert_eq!(tool_inputs(&out)[&1], r#"{"query":"DROP TABLE users"}"#);
}

/// Clients number blocks after the ones `message_start` holds: a tool block at the index after
/// them is repaired, one at an index they hold already (or after a second `message_start`)
/// passes unchanged.
#[test]
fn blocks_are_numbered_after_the_ones_message_start_holds() {
    let input = text(&fixture("seed-malformed.sse"));
    let start_frame = input.split("\n\n").next().unwrap().to_string();
    let with_one_block = start_frame.replacen("\"content\":[]", "\"content\":[{\"type\":\"text\",\"text\":\"a\"}]", 1);
    assert_ne!(with_one_block, start_frame, "the fixture's message_start holds an empty content list");
    // The fixture's tool block is at index 1 after a text block at 0: with one block in
    // message_start, clients put the text block at 1 and the tool block at 2.
    let shifted = input.replacen(&start_frame, &with_one_block, 1);
    let (out, decisions) = run(shifted.as_bytes());
    assert_eq!(text(&out), shifted, "blocks numbered from 0 after a message holding one");
    assert!(decisions.iter().all(|d| d.outcome.status != Status::Repaired), "{decisions:?}");

    let twice = input.replacen(&start_frame, &format!("{start_frame}\n\n{start_frame}"), 1);
    let (out, decisions) = run(twice.as_bytes());
    assert_eq!(text(&out), twice, "a second message_start");
    assert!(decisions.iter().all(|d| d.outcome.status != Status::Repaired), "{decisions:?}");

    let (_, decisions) = run(input.as_bytes());
    assert_eq!(decisions.iter().filter(|d| d.outcome.status == Status::Repaired).count(), 1, "the control");
}
