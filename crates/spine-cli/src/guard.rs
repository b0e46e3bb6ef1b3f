//! Starts the guard process (`spine __guard`, see `spine_process::guard`) for the commands that
//! start tools, hooks and MCP servers: if spine is killed outright, the guard kills their
//! process groups.

/// Starts the guard; without one (no executable path, spawn failure) spine runs unguarded and
/// says so once.
pub fn start() {
    let started = std::env::current_exe().and_then(|exe| spine_process::guard::start(&exe, &["__guard"]));
    if let Err(e) = started {
        eprintln!("warning: cannot start the guard process ({e}); a killed spine may leave tools running");
    }
}
