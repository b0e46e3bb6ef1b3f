//! W3C Trace Context `traceparent` values (`00-<trace id>-<parent id>-<flags>`): a worker's
//! run becomes a child of the span that submitted its assignment.

use std::fmt;
use std::str::FromStr;

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

use crate::exporter::OtelError;

/// A parsed `traceparent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace the run joins.
    pub trace_id: TraceId,
    /// The submitter's span, the run's parent.
    pub parent_id: SpanId,
    /// The submitter's flags (bit 0: sampled).
    pub flags: TraceFlags,
}

impl TraceParent {
    /// The remote span context of the parent.
    pub fn span_context(&self) -> SpanContext {
        SpanContext::new(self.trace_id, self.parent_id, self.flags, true, TraceState::NONE)
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
        Ok(TraceParent { trace_id, parent_id, flags: TraceFlags::new(flags & 0x01) })
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
}
