//! A request body sent upstream as it arrives, chunk by chunk, with each chunk kept (a
//! reference, not a copy) so the whole body can be read once it is all in: a long session's
//! request is not held back until its last byte before the upstream sees its first.

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use tokio::sync::oneshot;

/// The body to send upstream and the whole body once `length` bytes went through. The whole
/// body never arrives (the receiver errs) when the client or the upstream gives up first.
pub fn tee(body: Body, length: usize) -> (reqwest::Body, oneshot::Receiver<Bytes>) {
    let (whole, received) = oneshot::channel();
    let state = (body.into_data_stream(), Vec::new(), 0usize, Some(whole));
    let stream = futures_util::stream::unfold(state, move |(mut data, mut kept, mut seen, mut whole)| async move {
        let chunk = data.next().await?;
        if let Ok(bytes) = &chunk {
            seen += bytes.len();
            kept.push(bytes.clone());
            if seen >= length {
                if let Some(whole) = whole.take() {
                    let _ = whole.send(joined(std::mem::take(&mut kept)));
                }
            }
        }
        Some((chunk, (data, kept, seen, whole)))
    });
    (reqwest::Body::wrap_stream(stream), received)
}

/// One buffer from the chunks; a body that came in one chunk is not copied.
fn joined(mut chunks: Vec<Bytes>) -> Bytes {
    if chunks.len() == 1 {
        return chunks.pop().unwrap_or_default();
    }
    let mut whole = BytesMut::with_capacity(chunks.iter().map(Bytes::len).sum());
    for chunk in chunks {
        whole.extend_from_slice(&chunk);
    }
    whole.freeze()
}
