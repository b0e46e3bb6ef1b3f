//! The trace recorder: collects [`TraceEntry`]s for one run, in order, and forwards each one
//! to an optional live sink (the `--trace FILE` writer, the stream-json printer).
//!
//! Recording is cheap (one uncontended lock and a push), so every stage and every hook records.
//! Each entry is kept once, behind an [`Arc`]: a sink that keeps entries (the span exporter)
//! shares them instead of copying them.
//!
//! A subagent's run records into a [`Trace::nested`] trace: its own entries (numbered from 0,
//! as any run's), each also forwarded to the parent's trace — and so to the parent's sink —
//! tagged with a [`SubagentTag`] naming the `Agent` call that started it. A grandchild's entries
//! keep their own tag on the way up, so the whole tree lands in the main run's trace.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Map, Value};
use spine_protocol::trace::{StageName, StageTrace, SubagentTag, TraceEntry, TraceRecord, WarningTrace};

/// Receives each entry as it is recorded.
pub trait TraceSink: Send + Sync {
    /// Called once per entry, in order; a sink that keeps the entry clones the [`Arc`].
    fn record(&self, entry: &Arc<TraceEntry>);
}

/// The trace of one run. Cloning shares the same trace.
#[derive(Clone)]
pub struct Trace {
    inner: Arc<Inner>,
}

struct Inner {
    start: Instant,
    entries: Mutex<Vec<Arc<TraceEntry>>>,
    sink: Option<Arc<dyn TraceSink>>,
    /// The parent run's trace, for a subagent's trace: every entry is forwarded there.
    parent: Option<(Trace, SubagentTag)>,
}

impl Default for Trace {
    fn default() -> Self {
        Trace::new(None)
    }
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace").field("entries", &self.len()).finish()
    }
}

impl Trace {
    /// A new trace, optionally forwarding entries to a sink.
    pub fn new(sink: Option<Arc<dyn TraceSink>>) -> Self {
        Trace { inner: Arc::new(Inner { start: Instant::now(), entries: Mutex::new(Vec::new()), sink, parent: None }) }
    }

    /// The trace of a subagent started by this run's `Agent` call `tag.parent_tool_use_id`:
    /// entries are its own and are also forwarded here tagged with `tag` (its `seq` is set per
    /// entry).
    pub fn nested(&self, tag: SubagentTag) -> Trace {
        let inner = Inner {
            start: Instant::now(),
            entries: Mutex::new(Vec::new()),
            sink: None,
            parent: Some((self.clone(), tag)),
        };
        Trace { inner: Arc::new(inner) }
    }

    /// Appends a record.
    pub fn record(&self, record: TraceRecord) {
        let forward = self.push(record, None);
        if let (Some((parent, tag)), Some((seq, record))) = (&self.inner.parent, forward) {
            parent.forwarded(record, SubagentTag { seq, ..tag.clone() });
        }
    }

    /// An entry of a subagent's run (or of a deeper one, already tagged), kept and passed up.
    fn forwarded(&self, record: TraceRecord, tag: SubagentTag) {
        if let (Some((_, record)), Some((parent, _))) = (self.push(record, Some(tag.clone())), &self.inner.parent) {
            parent.forwarded(record, tag);
        }
    }

    /// Appends one entry; hands back its `seq` and record when a parent must see it too.
    fn push(&self, record: TraceRecord, subagent: Option<SubagentTag>) -> Option<(u64, TraceRecord)> {
        let t_us = micros(self.inner.start.elapsed());
        let mut entries = match self.inner.entries.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let seq = entries.len() as u64;
        let forward = self.inner.parent.as_ref().map(|_| (seq, record.clone()));
        let entry = Arc::new(TraceEntry { seq, t_us, record, subagent });
        if let Some(sink) = &self.inner.sink {
            sink.record(&entry);
        }
        entries.push(entry);
        forward
    }

    /// Appends a stage entry.
    pub fn stage(&self, name: StageName, tool_use_id: Option<&str>, started: Instant, fields: Map<String, Value>) {
        self.record(TraceRecord::Stage(StageTrace {
            hook: name,
            tool_use_id: tool_use_id.map(str::to_owned),
            duration_us: micros(started.elapsed()),
            fields,
        }));
    }

    /// Appends a warning.
    pub fn warn(&self, message: impl Into<String>, tool_use_id: Option<&str>) {
        self.record(TraceRecord::Warning(WarningTrace {
            message: message.into(),
            tool_use_id: tool_use_id.map(str::to_owned),
        }));
    }

    /// A copy of the entries so far.
    pub fn entries(&self) -> Vec<TraceEntry> {
        let entries = match self.inner.entries.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        entries.iter().map(|e| TraceEntry::clone(e)).collect()
    }

    /// The number of entries so far.
    pub fn len(&self) -> usize {
        match self.inner.entries.lock() {
            Ok(g) => g.len(),
            Err(poisoned) => poisoned.into_inner().len(),
        }
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The stage names recorded so far, in order (for tests and summaries).
    pub fn stage_names(&self) -> Vec<StageName> {
        self.entries()
            .into_iter()
            .filter_map(|e| match e.record {
                TraceRecord::Stage(s) => Some(s.hook),
                _ => None,
            })
            .collect()
    }
}

/// Microseconds of a duration, saturating.
pub fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Builds a JSON field map from `(key, value)` pairs.
#[macro_export]
macro_rules! fields {
    ($($key:literal => $value:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut map = ::serde_json::Map::new();
        $( map.insert($key.to_owned(), ::serde_json::json!($value)); )*
        map
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(agent_id: &str, parent_tool_use_id: &str, depth: u32) -> SubagentTag {
        SubagentTag {
            agent_id: agent_id.to_owned(),
            agent_type: "t".to_owned(),
            parent_tool_use_id: parent_tool_use_id.to_owned(),
            parent_agent_id: None,
            depth,
            seq: 0,
        }
    }

    #[test]
    fn a_nested_trace_forwards_every_entry_up_keeping_the_deepest_tag() {
        let main = Trace::default();
        let child = main.nested(tag("child", "t1", 1));
        let grandchild = child.nested(tag("grand", "k1", 2));
        child.warn("in the child", None);
        grandchild.warn("in the grandchild", None);
        main.warn("in the main agent", None);
        let tags: Vec<Option<(String, u64)>> =
            main.entries().iter().map(|e| e.subagent.as_ref().map(|t| (t.agent_id.clone(), t.seq))).collect();
        assert_eq!(tags, [Some(("child".to_owned(), 0)), Some(("grand".to_owned(), 0)), None]);
        assert_eq!(main.entries().iter().map(|e| e.seq).collect::<Vec<_>>(), [0, 1, 2], "the parent numbers its own");
        assert_eq!(child.len(), 2, "the child keeps its own and its child's");
        assert_eq!(grandchild.entries()[0].subagent, None, "a run's own entries carry no tag in its own trace");
    }
}
