//! Reading a request body to its end, within its own bound (`max_request_bytes`) and the
//! sidecar's bound on request bytes held at once (`request_memory_bytes`).

use super::budget::Held;
use axum::body::Body;
use bytes::Bytes;
use futures_util::StreamExt;

/// Why a body was not read whole.
#[derive(Debug)]
pub enum Unread {
    /// Over `max_request_bytes`.
    TooLarge,
    /// Over what the sidecar may hold at once, with the other requests' bodies.
    NoMemory,
    /// It broke off, or its framing is wrong (a bad chunk size).
    Broken(axum::Error),
}

/// A declared length up to this is reserved at once (one allocation, no copy, for any real
/// request); past it the buffer doubles as bytes arrive, so a client that declares 32 MiB and
/// sends a byte holds a few bytes, not the bound (attack round 10: eight such took it all).
const RESERVED_AT_ONCE: usize = 1 << 20;

/// The whole body, its buffer counted in `held` as it grows: its capacity (what is allocated,
/// not only what is filled), and both buffers while it moves to a bigger one.
/// `declared`: its `Content-Length`, when it has one.
pub async fn read_whole(body: Body, declared: Option<usize>, limit: usize, held: &mut Held) -> Result<Bytes, Unread> {
    let mut whole = Vec::new();
    let mut data = body.into_data_stream();
    while let Some(chunk) = data.next().await {
        let chunk = chunk.map_err(Unread::Broken)?;
        let needed = whole.len() + chunk.len();
        if needed > limit {
            return Err(Unread::TooLarge);
        }
        if needed > whole.capacity() {
            // Doubling copies a body a few times, not once per chunk; the declared length
            // is taken at once when it is small or doubling would reach it anyway.
            let doubled = needed.max(2 * whole.capacity());
            let capacity = match declared {
                Some(length) if length >= needed && length <= doubled.max(RESERVED_AT_ONCE) => length,
                _ => doubled,
            };
            let capacity = capacity.min(limit);
            let old = whole.capacity();
            if !held.grow(capacity) {
                return Err(Unread::NoMemory);
            }
            whole.reserve_exact(capacity - whole.len());
            held.shrink(old);
        }
        whole.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(whole))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::budget::RequestMemory;

    fn chunked(parts: &[&'static [u8]]) -> Body {
        let parts: Vec<Result<Bytes, std::io::Error>> = parts.iter().map(|p| Ok(Bytes::from_static(p))).collect();
        Body::from_stream(futures_util::stream::iter(parts))
    }

    #[tokio::test]
    async fn a_body_is_read_whole_and_counted_while_it_is_held() {
        let memory = RequestMemory::new(1000, Default::default());
        let mut held = memory.hold();
        let whole = read_whole(chunked(&[b"{\"a\":", b" 1", b"}"]), None, 100, &mut held).await.unwrap();
        assert_eq!(&whole[..], b"{\"a\": 1}");
        assert!(held.bytes() >= whole.len() && held.bytes() <= 100, "{}", held.bytes());
        drop(held);
        assert!(memory.hold().grow(1000), "given back");
    }

    #[tokio::test]
    async fn over_its_own_bound_or_the_shared_one_it_is_not_read() {
        let roomy = RequestMemory::new(100, Default::default());
        let over = read_whole(chunked(&[b"12345", b"67890", b"1"]), None, 10, &mut roomy.hold()).await;
        assert!(matches!(over, Err(Unread::TooLarge)), "{over:?}");
        // While its buffer moves from 5 bytes to 10, both are held: 15 of 12.
        let tight = RequestMemory::new(12, Default::default());
        let moving = read_whole(chunked(&[b"12345", b"67890"]), None, 10, &mut tight.hold()).await;
        assert!(matches!(moving, Err(Unread::NoMemory)), "{moving:?}");
        let memory = RequestMemory::new(10, Default::default());
        let mut other = memory.hold();
        assert!(other.grow(8));
        let mut held = memory.hold();
        let starved = read_whole(chunked(&[b"12345"]), Some(5), 100, &mut held).await;
        assert!(matches!(starved, Err(Unread::NoMemory)), "{starved:?}");
        // A big declared length is not taken before its bytes come.
        drop(other);
        let mut declared = memory.hold();
        let small = read_whole(chunked(&[b"12345"]), Some(32 << 20), 64 << 20, &mut declared).await;
        assert_eq!(&small.unwrap()[..], b"12345");
        assert_eq!(declared.bytes(), 5);
    }
}
