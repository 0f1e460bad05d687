//! A connection whose writes wait for the client at most so long: a client that stops
//! reading (a GET's body left unread, a zero TCP window) has its connection closed after
//! `--send-timeout-secs`, and what its response held (the object, its room in
//! `--max-stored-bytes`) is let go. hyper has no such timeout of its own; nginx's
//! `send_timeout` (60 s by default) is the model: it bounds the wait between two successful
//! writes, not a response's whole time, so a slow but moving reader is never cut.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `io` with its writes bounded: a write (or flush) that has waited `limit` since the last
/// one that made progress fails with `TimedOut`, which ends the connection.
pub struct SendTimeout<T> {
    io: T,
    limit: Duration,
    /// Started when a write first waits; dropped when one makes progress.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl<T> SendTimeout<T> {
    pub fn new(io: T, limit: Duration) -> SendTimeout<T> {
        SendTimeout {
            io,
            limit,
            waiting: None,
        }
    }

    /// `poll` (a write or a flush) with the wait bounded.
    fn bounded<R>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        if poll.is_ready() {
            self.waiting = None;
            return poll;
        }
        let limit = self.limit;
        let waiting = self.waiting.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match waiting.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client read nothing for {} s (--send-timeout-secs): connection closed",
                    limit.as_secs()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendTimeout<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendTimeout<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write(cx, buf);
        self.bounded(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.bounded(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.io).poll_flush(cx);
        self.bounded(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_write_the_peer_never_reads_fails_after_the_limit_and_not_before() {
        // A pipe of 64 bytes whose reader reads nothing: the second write waits.
        let (near, mut far) = tokio::io::duplex(64);
        let mut io = SendTimeout::new(near, Duration::from_secs(60));
        io.write_all(&[1; 64]).await.expect("the first 64 bytes fit");
        let early = tokio::time::timeout(Duration::from_secs(59), io.write_all(&[2; 64])).await;
        assert!(early.is_err(), "the write gave up before the limit: {early:?}");
        let e = tokio::time::timeout(Duration::from_secs(120), io.write_all(&[2; 64]))
            .await
            .expect("the write gave up by the limit")
            .expect_err("a write the peer never reads");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        let mut first = [0; 64];
        far.read_exact(&mut first).await.expect("what was written is there");
        assert_eq!(first, [1; 64]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_reader_that_keeps_reading_slowly_is_never_cut() {
        let (near, mut far) = tokio::io::duplex(64);
        let mut io = SendTimeout::new(near, Duration::from_secs(60));
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            let mut buf = [0; 64];
            while got.len() < 64 * 10 {
                tokio::time::sleep(Duration::from_secs(50)).await;
                let n = far.read(&mut buf).await.expect("read");
                got.extend_from_slice(&buf[..n]);
            }
            got
        });
        // Ten writes over about 500 s in all, each waiting 50 s for the reader.
        for i in 0..10u8 {
            io.write_all(&[i; 64]).await.expect("a moving reader is not cut");
        }
        let got = reader.await.expect("reader");
        assert_eq!(got.len(), 640);
    }
}
