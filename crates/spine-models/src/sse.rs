//! Server-sent-event framing shared by the providers, over `eventsource-stream`.
//!
//! [`events`] turns a body chunk stream into SSE events (`event:` name and joined `data:`
//! lines; comments and `id:`/`retry:` handled per the HTML spec). Body errors pass through as
//! [`SseError::Body`]; bytes that are not UTF-8 become [`SseError::Malformed`]. A partial event
//! at the end of the body (no blank line after it) is dropped: the provider parsers then see the
//! stream end before its terminator and report it.
//!
//! Chunks are split at line ends before they reach `eventsource-stream` ([`LineChunks`]): its
//! parser copies the unparsed rest of its buffer after every line, which is quadratic in the
//! chunk size when a network read carries hundreds of events. With one line per chunk the
//! buffer never holds more than one line.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use thiserror::Error;

use crate::http::BodyError;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name (`message` when absent).
    pub event: String,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

/// A failure while framing events.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SseError {
    /// The body failed (connection cut, idle timeout).
    #[error(transparent)]
    Body(BodyError),
    /// The bytes are not an event stream (invalid UTF-8).
    #[error("malformed event stream: {0}")]
    Malformed(String),
}

/// The events of a body.
pub fn events<S>(body: S) -> impl Stream<Item = Result<SseEvent, SseError>>
where
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    LineChunks::new(body).eventsource().map(|item| match item {
        Ok(e) => Ok(SseEvent { event: e.event, data: e.data }),
        Err(EventStreamError::Transport(e)) => Err(SseError::Body(e)),
        Err(EventStreamError::Utf8(e)) => Err(SseError::Malformed(e.to_string())),
        Err(EventStreamError::Parser(e)) => Err(SseError::Malformed(e.to_string())),
    })
}

/// The longest quote of a bad line in an error message, in characters.
const MAX_QUOTE: usize = 200;

/// `text` for an error message: trailing whitespace removed, cut to 200 characters.
pub(crate) fn quote(text: &str) -> String {
    let text = text.trim_end();
    match text.char_indices().nth(MAX_QUOTE) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Re-chunks a byte stream so that every chunk ends at a `\n` (except possibly the last one
/// before the stream ends or a line continues in the next read). Slicing `Bytes` is
/// zero-copy.
pub struct LineChunks<S> {
    inner: S,
    pending: Bytes,
}

impl<S> LineChunks<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        LineChunks { inner, pending: Bytes::new() }
    }
}

impl<S, E> Stream for LineChunks<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if !this.pending.is_empty() {
                let cut = match this.pending.iter().position(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None => this.pending.len(),
                };
                return Poll::Ready(Some(Ok(this.pending.split_to(cut))));
            }
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => this.pending = chunk,
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;

    async fn collect(chunks: &[&'static str]) -> Vec<Result<SseEvent, SseError>> {
        let body = stream::iter(
            chunks.iter().map(|c| Ok::<_, BodyError>(Bytes::from_static(c.as_bytes()))).collect::<Vec<_>>(),
        );
        events(body).collect().await
    }

    fn ev(event: &str, data: &str) -> Result<SseEvent, SseError> {
        Ok(SseEvent { event: event.into(), data: data.into() })
    }

    #[tokio::test]
    async fn events_survive_any_chunk_boundary() {
        let text = "event: a\ndata: {\"x\":1}\n\n: comment\ndata: two\r\ndata: lines\r\n\r\ndata: [DONE]\n\n";
        let want = vec![ev("a", "{\"x\":1}"), ev("message", "two\nlines"), ev("message", "[DONE]")];
        assert_eq!(collect(&[text]).await, want);
        for cut in 1..text.len() {
            let (a, b) = text.split_at(cut);
            let a: &'static str = Box::leak(a.to_owned().into_boxed_str());
            let b: &'static str = Box::leak(b.to_owned().into_boxed_str());
            assert_eq!(collect(&[a, b]).await, want, "cut at {cut}");
        }
    }

    #[tokio::test]
    async fn a_trailing_event_without_blank_line_is_dropped() {
        assert_eq!(collect(&["data: one\n\ndata: partial"]).await, vec![ev("message", "one")]);
    }
}
