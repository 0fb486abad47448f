//! The stream state machine: any split of a stream into chunks gives the same bytes as the
//! unsplit stream. The first bytes of the input choose the chunk sizes, the rest is the stream
//! (recorded fixtures are in the seed corpus: fuzz/seeds/stream_chunks).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use toolmend::schema::ToolCatalog;
use toolmend::stream::{StreamOptions, StreamRepairer};

fn run(stream: &[u8], sizes: &[u8]) -> Vec<u8> {
    let tools = ToolCatalog::from_value(&toolmend::demo::seed_tools()).unwrap();
    let mut machine = StreamRepairer::new(Arc::new(tools), StreamOptions::default());
    let mut out = Vec::new();
    let mut rest = stream;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at((size as usize).clamp(1, rest.len()));
        out.extend(machine.feed(chunk).bytes);
        rest = tail;
    }
    out.extend(machine.finish().bytes);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&count, data)) = data.split_first() else { return };
    let (sizes, stream) = data.split_at((count as usize % 16).min(data.len()));
    let sizes = if sizes.is_empty() { &[7u8][..] } else { sizes };
    assert_eq!(run(stream, &[u8::MAX]), run(stream, sizes));
});
