//! The operator state: the live snapshot of the workspace (top-level entries, added roots,
//! memory entries) plus the sections the tools provide ([`OperatorStateSource`]). The caller
//! takes it before the prompt is assembled; it only ever goes into the volatile layers.

use serde_json::{Map, Value, json};

use crate::workspace::Workspace;

use super::ROOT_MEMORY_FILE;

/// The operator-state snapshot: top-level workspace entries (at most 20, skipping `.spine`
/// and `.git`), the added workspace roots (when there are any), the memory files, and any extra sections (command runs, processes) the tools
/// provide. Take it before assembling the prompt.
pub fn operator_snapshot(ws: &Workspace, extra: Map<String, Value>) -> Value {
    let mut highlights = Vec::new();
    if let Ok(dir) = std::fs::read_dir(ws.root()) {
        let mut names: Vec<(String, bool)> = dir
            .filter_map(Result::ok)
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.file_type().is_ok_and(|t| t.is_dir())))
            .filter(|(n, _)| n != ".spine" && n != ".git")
            .collect();
        names.sort();
        for (name, is_dir) in names.into_iter().take(20) {
            highlights.push(json!({"path": name, "node_type": if is_dir { "directory" } else { "file" }}));
        }
    }
    let memory_dir = ws.root().join(".spine").join("memory");
    let mut entries: Vec<String> = std::fs::read_dir(&memory_dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    entries.sort();
    let mut state = Map::new();
    let mut workspace = json!({"workspace_root": ws.root(), "highlights": highlights});
    if ws.added_roots().len() > 0 {
        // The added roots (`--add-dir`, `permissions.additionalDirectories`): the model may
        // use them with absolute paths.
        workspace["additional_directories"] = json!(ws.added_roots().collect::<Vec<_>>());
        workspace["additional_directories_note"] =
            json!("the file tools may also read and write these directories; give their absolute paths");
    }
    state.insert("workspace".into(), workspace);
    state.insert("memory".into(), json!({"root_memory_path": ROOT_MEMORY_FILE, "entries": entries}));
    state.extend(extra);
    Value::Object(state)
}

/// Extra sections of the operator state (command runs, processes), provided by the tools.
pub trait OperatorStateSource: Send + Sync {
    /// The sections to add, keyed by name.
    fn sections(&self) -> Map<String, Value>;
}
