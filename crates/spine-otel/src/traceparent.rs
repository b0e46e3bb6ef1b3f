//! W3C Trace Context `traceparent` values (`00-<trace id>-<parent id>-<flags>`) and the
//! `tracestate` that travels with them: a worker's run becomes a child of the span that
//! submitted its assignment, and vendors' entries in `tracestate` reach the run's spans.
//!
//! Contract: [`TraceParent`] parses and prints `traceparent` exactly (version `00`);
//! [`TraceParent::with_state`] attaches a `tracestate` header, refused when it is not a valid
//! W3C list (keys `[a-z0-9_\-*/@]`, values without `,`/`=`, at most 32 entries) — the caller
//! then keeps the `traceparent` alone, as the specification asks.

use std::fmt;
use std::str::FromStr;

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

use crate::exporter::OtelError;

/// A parsed `traceparent`, with the `tracestate` that came with it.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceParent {
    /// The trace the run joins.
    pub trace_id: TraceId,
    /// The submitter's span, the run's parent.
    pub parent_id: SpanId,
    /// The submitter's flags (bit 0: sampled).
    pub flags: TraceFlags,
    /// The submitter's `tracestate` ([`TraceState::NONE`] when it had none).
    pub state: TraceState,
}

/// At most this many list members in a `tracestate` (W3C Trace Context, 3.3.1.1).
const MAX_STATE_MEMBERS: usize = 32;

impl TraceParent {
    /// The remote span context of the parent.
    pub fn span_context(&self) -> SpanContext {
        SpanContext::new(self.trace_id, self.parent_id, self.flags, true, self.state.clone())
    }

    /// This parent with the `tracestate` header `header` (empty list members are skipped, as
    /// the specification allows). An invalid header is an error; `self` is unchanged by it.
    pub fn with_state(self, header: &str) -> Result<Self, OtelError> {
        let bad = |why: &str| OtelError::TraceState(format!("`{header}`: {why}"));
        let members: Vec<&str> =
            header.split(',').map(|m| m.trim_matches([' ', '\t'])).filter(|m| !m.is_empty()).collect();
        if members.len() > MAX_STATE_MEMBERS {
            return Err(bad("more than 32 list members"));
        }
        // The crate's parser takes an empty key or value; the specification does not.
        if members.iter().any(|m| m.split_once('=').is_none_or(|(key, value)| key.is_empty() || value.is_empty())) {
            return Err(bad("every list member is KEY=VALUE, neither empty"));
        }
        let state: TraceState = header.parse().map_err(|e| bad(&format!("{e}")))?;
        Ok(TraceParent { state, ..self })
    }

    /// The `tracestate` header to hand on, `None` when there is none.
    pub fn tracestate(&self) -> Option<String> {
        let header = self.state.header();
        (!header.is_empty()).then_some(header)
    }
}

impl FromStr for TraceParent {
    type Err = OtelError;

    /// Parses version `00` (and, as the specification asks, the first four fields of a later
    /// version); ids of all zeros and version `ff` are invalid.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| OtelError::TraceParent(format!("`{s}`: {why}"));
        let mut parts = s.trim().split('-');
        let (Some(version), Some(trace), Some(parent), Some(flags)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("expected VERSION-TRACEID-PARENTID-FLAGS"));
        };
        let hex = |field: &str, len: usize| {
            field.len() == len && field.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex(version, 2) || version == "ff" {
            return Err(bad("invalid version"));
        }
        if version == "00" && parts.next().is_some() {
            return Err(bad("version 00 has four fields"));
        }
        if !hex(trace, 32) || !hex(parent, 16) || !hex(flags, 2) {
            return Err(bad("ids are lowercase hex of 32 and 16 digits, flags of 2"));
        }
        let trace_id = TraceId::from_hex(trace).map_err(|_| bad("invalid trace id"))?;
        let parent_id = SpanId::from_hex(parent).map_err(|_| bad("invalid parent id"))?;
        let flags = u8::from_str_radix(flags, 16).map_err(|_| bad("invalid flags"))?;
        if trace_id == TraceId::INVALID || parent_id == SpanId::INVALID {
            return Err(bad("ids of all zeros are invalid"));
        }
        Ok(TraceParent { trace_id, parent_id, flags: TraceFlags::new(flags & 0x01), state: TraceState::NONE })
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "00-{}-{}-{:02x}", self.trace_id, self.parent_id, self.flags.to_u8())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_00_traceparent_reads_back_and_prints_identically() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parsed: TraceParent = text.parse().expect("valid");
        assert_eq!(parsed.trace_id.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(parsed.span_context().is_sampled());
        assert!(parsed.span_context().is_remote());
        assert_eq!(parsed.to_string(), text);
    }

    #[test]
    fn malformed_traceparents_are_refused() {
        for text in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert!(text.parse::<TraceParent>().is_err(), "{text}");
        }
    }

    fn parent() -> TraceParent {
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".parse().expect("valid")
    }

    #[test]
    fn a_tracestate_is_carried_into_the_span_context_and_handed_on_as_given() {
        let parent = parent().with_state("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7").expect("valid state");
        assert_eq!(parent.span_context().trace_state().get("congo"), Some("t61rcWkgMzE"));
        assert_eq!(parent.tracestate().as_deref(), Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"));
        assert_eq!(parent.to_string(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "traceparent alone");
    }

    #[test]
    fn an_invalid_tracestate_is_refused_and_no_state_means_none() {
        assert_eq!(parent().tracestate(), None);
        for header in ["Upper=1", "k=v,=x", "k=", "k=a,b", "k=v=w"] {
            assert!(parent().with_state(header).is_err(), "{header}");
        }
        let many = (0..33).map(|i| format!("k{i}=v")).collect::<Vec<_>>().join(",");
        assert!(parent().with_state(&many).is_err(), "33 members");
    }
}
