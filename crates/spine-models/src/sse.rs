//! Server-sent-event framing shared by the providers: a parser of our own, linear in the
//! bytes it is given.
//!
//! [`events`] turns a body chunk stream into SSE events (`event:` name and joined `data:`
//! lines; comments, `id:` and `retry:` skipped; lines end at LF, CRLF or CR, as the HTML spec
//! says). Body errors pass through as [`SseError::Body`]; bytes that are not UTF-8, and a line
//! or an event longer than the cap ([`MAX_LINE`] by default), become [`SseError::Malformed`].
//! A partial event at the end of the body (no blank line after it) is dropped: the provider
//! parsers then see the stream end before its terminator and report it.
//!
//! `assemble` is the step every provider's reader shares: it feeds each event's data to the
//! provider's `Assemble` until a terminal event, and turns a broken body or a malformed
//! stream into the attempt's error (with what was delivered before it).
//!
//! Each byte is scanned once (`memchr` over each new chunk only): a line that arrives in many
//! reads costs the same as one that arrives whole. `eventsource-stream`, used before, re-parsed
//! its whole buffer after every read, which made a 16 MB line without a newline cost 98 s.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use spine_core::model::{ModelErrorKind, ModelReply, StreamSink};
use thiserror::Error;

use crate::http::BodyError;
use crate::retry::AttemptError;

/// The default cap on one line, and on the data of one event: 16 MiB.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

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
    /// The bytes are not an event stream (invalid UTF-8, a line or event over the cap).
    #[error("malformed event stream: {0}")]
    Malformed(String),
}

/// The events of a body, with lines and events capped at [`MAX_LINE`] bytes.
pub fn events<S>(body: S) -> Events<S>
where
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    events_capped(body, MAX_LINE)
}

/// The events of a body, with lines and events capped at `cap` bytes.
pub fn events_capped<S>(body: S, cap: usize) -> Events<S>
where
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    Events { inner: body, parser: Parser::new(cap), ready: VecDeque::new(), done: false }
}

/// The event stream of [`events`].
pub struct Events<S> {
    inner: S,
    parser: Parser,
    ready: VecDeque<Result<SseEvent, SseError>>,
    done: bool,
}

impl<S> Stream for Events<S>
where
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    type Item = Result<SseEvent, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(next) = this.ready.pop_front() {
                if next.is_err() {
                    this.done = true;
                    this.ready.clear();
                }
                return Poll::Ready(Some(next));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => this.parser.feed(&chunk, &mut this.ready),
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(SseError::Body(e))));
                }
                Poll::Ready(None) => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// A provider's reply as its events arrive.
pub(crate) trait Assemble {
    /// What the terminal event leaves for [`Assemble::finish`].
    type End;
    /// The event that completes a reply, named when a stream ends without it.
    const TERMINAL: &'static str;

    /// Takes one event's data; `Break` at the terminal event. Errors are already marked by
    /// [`Assemble::fail`].
    fn push(&mut self, data: &str, sink: &dyn StreamSink) -> Result<ControlFlow<Self::End>, AttemptError>;

    /// Marks an error with whether content was already delivered (and what it cost so far).
    fn fail(&self, error: AttemptError) -> AttemptError;

    /// The reply, after the terminal event.
    fn finish(self, end: Self::End) -> Result<ModelReply, AttemptError>;

    /// The stream broke (`Some`) or ended (`None`) before the terminal event: by default the
    /// body's error, or a transport error "stream ended before the reply was complete".
    fn cut(self, broken: Option<BodyError>) -> Result<ModelReply, AttemptError>
    where
        Self: Sized,
    {
        Err(self.fail(match broken {
            Some(e) => e.into_attempt_error(),
            None => AttemptError::new(
                ModelErrorKind::Transport,
                format!("stream ended before the reply was complete (no {})", Self::TERMINAL),
            ),
        }))
    }
}

/// One event's data as the provider's event type; data that is not (that shape of) JSON is an
/// invalid reply quoting the line.
pub(crate) fn parse_event<'a, T: Deserialize<'a>>(data: &'a str) -> Result<T, AttemptError> {
    serde_json::from_str(data).map_err(|e| {
        AttemptError::new(
            ModelErrorKind::InvalidReply,
            format!("invalid JSON in stream line `data: {}` ({e})", quote(data)),
        )
    })
}

/// Reads a streamed reply: the events of `body` into `reply`, forwarding text to `sink`.
pub(crate) async fn assemble<A, S>(body: S, sink: &dyn StreamSink, mut reply: A) -> Result<ModelReply, AttemptError>
where
    A: Assemble,
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    let mut events = events(body);
    while let Some(event) = events.next().await {
        match event {
            Ok(event) => {
                if let ControlFlow::Break(end) = reply.push(&event.data, sink)? {
                    return reply.finish(end);
                }
            }
            Err(SseError::Body(e)) => return reply.cut(Some(e)),
            Err(e @ SseError::Malformed(_)) => {
                return Err(reply.fail(AttemptError::new(ModelErrorKind::InvalidReply, e.to_string())));
            }
        }
    }
    reply.cut(None)
}

/// The incremental parser: a partial line, and the event being built.
struct Parser {
    cap: usize,
    line: BytesMut,
    /// The previous chunk ended with CR: a LF at the start of the next one ends nothing.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl Parser {
    fn new(cap: usize) -> Self {
        Parser { cap, line: BytesMut::new(), after_cr: false, event: None, data: String::new(), has_data: false }
    }

    /// Consumes one chunk; complete events (or the first error) go to `out`.
    fn feed(&mut self, mut chunk: &[u8], out: &mut VecDeque<Result<SseEvent, SseError>>) {
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while !chunk.is_empty() {
            let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) else {
                if self.line.len() + chunk.len() > self.cap {
                    out.push_back(Err(self.too_long("line")));
                    return;
                }
                self.line.extend_from_slice(chunk);
                return;
            };
            if self.line.len() + end > self.cap {
                out.push_back(Err(self.too_long("line")));
                return;
            }
            let complete = if self.line.is_empty() {
                self.line_done(&chunk[..end], out)
            } else {
                self.line.extend_from_slice(&chunk[..end]);
                let line = self.line.split().freeze();
                self.line_done(&line, out)
            };
            if !complete {
                return;
            }
            let ended_by_cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if ended_by_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
    }

    /// Handles one complete line; false after an error.
    fn line_done(&mut self, line: &[u8], out: &mut VecDeque<Result<SseEvent, SseError>>) -> bool {
        if line.is_empty() {
            if self.has_data {
                let event = self.event.take().unwrap_or_else(|| "message".to_owned());
                out.push_back(Ok(SseEvent { event, data: std::mem::take(&mut self.data) }));
            }
            self.event = None;
            self.has_data = false;
            return true;
        }
        if line[0] == b':' {
            return true;
        }
        let Ok(text) = std::str::from_utf8(line) else {
            out.push_back(Err(SseError::Malformed("invalid UTF-8 in an event stream line".into())));
            return false;
        };
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.cap {
                    out.push_back(Err(self.too_long("event")));
                    return false;
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
        true
    }

    fn too_long(&mut self, what: &str) -> SseError {
        self.line.clear();
        SseError::Malformed(format!("an event stream {what} is longer than {} bytes", self.cap))
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{StreamExt, stream};

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

    #[tokio::test]
    async fn lone_cr_and_crlf_split_across_reads_end_lines_once() {
        let want = vec![ev("message", "a"), ev("message", "b")];
        assert_eq!(collect(&["data: a\r", "\n\r\ndata: b\r\r"]).await, want);
        assert_eq!(collect(&["data: a\r\r", "data: b\n", "\n"]).await, want);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_malformed_even_when_it_never_ends() {
        let body = stream::iter((0..10).map(|_| Ok::<_, BodyError>(Bytes::from(vec![b'x'; 100]))));
        let out: Vec<_> = events_capped(body, 512).collect().await;
        assert_eq!(out.len(), 1);
        assert!(matches!(&out[0], Err(SseError::Malformed(m)) if m.contains("longer than 512")), "{out:?}");
    }

    #[tokio::test]
    async fn an_event_over_the_cap_is_malformed() {
        let body =
            stream::iter((0..10).map(|_| Ok::<_, BodyError>(Bytes::from(format!("data: {}\n", "y".repeat(90))))));
        let out: Vec<_> = events_capped(body, 512).collect().await;
        assert!(matches!(out.last(), Some(Err(SseError::Malformed(m))) if m.contains("event")), "{out:?}");
    }

    #[tokio::test]
    async fn invalid_utf8_is_malformed_and_ends_the_stream() {
        let body = stream::iter(vec![Ok::<_, BodyError>(Bytes::from_static(b"data: \xff\n\ndata: b\n\n"))]);
        let out: Vec<_> = events(body).collect().await;
        assert_eq!(out.len(), 1);
        assert!(matches!(&out[0], Err(SseError::Malformed(_))));
    }
}
