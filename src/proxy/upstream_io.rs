//! An upstream connection's bytes, as hyper's client reads and writes them, with two changes:
//!
//! - A write that fails does not fail the connection while it can still be read: an upstream
//!   that refuses a body early (a 413 as soon as it saw the head) and closes makes the body's
//!   next write fail, but its answer is already in the socket, and is read (attack round 10,
//!   finding 5: the answer was lost and the client got a 502). Once reading ends too, writes
//!   return their error, so the connection ends.
//! - A [`Cut`] ends the connection at once: an exchange that is over while the request body is
//!   still waiting to be written (the upstream answered without reading it) lets go of the body,
//!   and of the request memory it holds, instead of waiting on the upstream (finding 6).

use futures_util::task::AtomicWaker;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Ends one upstream connection (given in its responses' extensions).
#[derive(Clone, Default)]
pub struct Cut(Arc<CutState>);

#[derive(Default)]
struct CutState {
    cut: AtomicBool,
    /// The connection's task, woken to see the cut.
    waker: AtomicWaker,
}

impl Cut {
    pub fn cut(&self) {
        self.0.cut.store(true, Ordering::Relaxed);
        self.0.waker.wake();
    }

    fn is_cut(&self, cx: &mut Context<'_>) -> bool {
        self.0.waker.register(cx.waker());
        self.0.cut.load(Ordering::Relaxed)
    }
}

/// `inner`, as described in the module's comment.
pub struct UpstreamIo<T> {
    inner: T,
    cut: Cut,
    /// The first write's error: writes wait (reads go on) until reading ends.
    write_failed: Option<io::Error>,
    /// Reading reached the end or an error.
    read_ended: bool,
}

impl<T> UpstreamIo<T> {
    pub fn new(inner: T) -> Self {
        Self { inner, cut: Cut::default(), write_failed: None, read_ended: false }
    }
}

fn aborted() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, "the exchange ended before its request body was sent")
}

impl<T: Unpin> UpstreamIo<T> {
    /// A write's outcome: an error is kept and waited on while the connection can still be read.
    fn wrote<R>(&mut self, cx: &mut Context<'_>, outcome: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        match outcome {
            Poll::Ready(Err(error)) if self.write_failed.is_none() => {
                tracing::debug!(%error, "writing upstream failed: its answer is still read");
                self.write_failed = Some(error);
                self.failed_write(cx)
            }
            outcome => outcome,
        }
    }

    /// A write after one failed: pending until reading ends (a read wakes the task), then the error.
    fn failed_write<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        if self.read_ended || self.cut.is_cut(cx) {
            let error = self.write_failed.as_ref().map_or_else(aborted, |e| io::Error::new(e.kind(), e.to_string()));
            return Poll::Ready(Err(error));
        }
        Poll::Pending
    }
}

impl<T: Read + Unpin> Read for UpstreamIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, mut buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.cut.is_cut(cx) {
            return Poll::Ready(Err(aborted()));
        }
        // Read through a buffer of our own over the cursor's memory, to see how much came.
        // SAFETY: the bytes are only written by `poll_read`, and `advance` covers only those filled.
        let read = unsafe {
            let mut own = hyper::rt::ReadBuf::uninit(buf.as_mut());
            let room = own.unfilled().remaining();
            match Pin::new(&mut this.inner).poll_read(cx, own.unfilled()) {
                Poll::Ready(Ok(())) => {
                    let filled = own.filled().len();
                    buf.advance(filled);
                    Poll::Ready(Ok(room > 0 && filled == 0))
                }
                Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
                Poll::Pending => Poll::Pending,
            }
        };
        let ended = matches!(read, Poll::Ready(Ok(true)) | Poll::Ready(Err(_)));
        if ended && !this.read_ended {
            this.read_ended = true;
            // A write waiting on its error ends now.
            cx.waker().wake_by_ref();
        }
        read.map_ok(|_| ())
    }
}

impl<T: Write + Unpin> Write for UpstreamIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.cut.is_cut(cx) {
            return Poll::Ready(Err(aborted()));
        }
        if this.write_failed.is_some() {
            return this.failed_write(cx);
        }
        let outcome = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.wrote(cx, outcome)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.cut.is_cut(cx) {
            return Poll::Ready(Err(aborted()));
        }
        if this.write_failed.is_some() {
            return this.failed_write(cx);
        }
        let outcome = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.wrote(cx, outcome)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.cut.is_cut(cx) {
            return Poll::Ready(Err(aborted()));
        }
        if this.write_failed.is_some() {
            return this.failed_write(cx);
        }
        let outcome = Pin::new(&mut this.inner).poll_flush(cx);
        this.wrote(cx, outcome)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.write_failed.is_some() || this.cut.is_cut(cx) {
            // Nothing more can be written: closing is all that is left.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

impl<T: Connection> Connection for UpstreamIo<T> {
    fn connected(&self) -> Connected {
        self.inner.connected().extra(self.cut.clone())
    }
}
