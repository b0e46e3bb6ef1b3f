//! `--trace FILE`: each trace entry written as one JSON line as soon as it is recorded.

use std::fs::File;
use std::io::{LineWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use spine_core::trace::TraceSink;
use spine_protocol::trace::TraceEntry;

/// Writes trace entries to a file.
pub struct TraceFile(Mutex<LineWriter<File>>);

impl TraceFile {
    /// Creates (truncates) the file.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        Ok(TraceFile(Mutex::new(LineWriter::new(File::create(path)?))))
    }
}

impl TraceSink for TraceFile {
    fn record(&self, entry: &Arc<TraceEntry>) {
        if let (Ok(mut w), Ok(line)) = (self.0.lock(), serde_json::to_string(entry)) {
            let _ = writeln!(w, "{line}");
        }
    }
}
