//! The terminal approver: asks on stderr and reads the answer from the terminal. Used only
//! when stdin is a terminal; otherwise `ask` fails closed.
//!
//! Four answers, as in Claude Code:
//!
//! - `y` — yes, this call;
//! - `n` — no; a reason may follow (`n not now`, or on the next prompt line) and reaches the
//!   model;
//! - `a` — always for this session: the call's narrowest rules
//!   ([`spine_core::permission::covering_rules`], e.g. `Bash(npm test:*)`, one per command of a
//!   compound command) are remembered, and a later call whose rules are all remembered is
//!   allowed without asking;
//! - `p` — always for this project: the same, and the rules are added to
//!   `<project>/.spine/settings.local.json` (`permissions.allow`), said on stderr with the file,
//!   never through a symbolic link (a `.spine` folder or settings file that is one is refused,
//!   with a message, and the rules hold for the session only: [`super::project_rules`]);
//!   when managed settings allow only their own rules (`allowManagedPermissionRulesOnly`),
//!   nothing is saved (the rule would not apply) and stderr says so: the rules hold for the
//!   session only, as in Claude Code.
//!
//! It also answers MCP elicitations no hook answered: the server's message, then the form's
//! fields one by one, or the page to open ([`super::elicit`]).
//!
//! The question names the tool, its arguments and who asked: the rule (`rule Bash(git push:*)`),
//! the hook, the mode's default or the workspace boundary, with the reason; and, before the
//! answer, the rules an "always" answer would remember (`"always" remembers Bash(npm test:*)`)
//! and where each "always" keeps them — the very rules the answer stores, from the same
//! [`covering_rules`] call: `a → for this session`, `p → adds Bash(npm test:*) to this
//! project's .spine/settings.local.json` (or why `p` saves nothing).
//!
//! What it remembers can be forgotten ([`TerminalApprover::forget`], the chat's `/permissions
//! forget N`): a later call then asks again.
//!
//! When no rule narrower than the whole tool exists (an opaque command), only `y`/`n` are
//! offered. A canceled turn (Ctrl-C while the question waits) stops waiting: the answer is
//! no, and nothing typed later is taken for it. A settings file that is not a JSON object is never overwritten: the rule then holds
//! for the session only, and stderr says why.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde_json::Value;
use spine_core::CancellationToken;
use spine_core::elicitation::{ElicitationAnswer, ElicitationRequest};
use spine_core::permission::{Approval, ApprovalRequest, Approver, covering_rules};
use spine_protocol::permission::DecisionSource;

use super::status::StatusLine;

/// Asks a person at the terminal (the live status line, if any, is cleared while it asks).
pub struct TerminalApprover {
    status: Option<Arc<StatusLine>>,
    project: PathBuf,
    /// Rules answered "always" in this session, with whether they were saved to the project's
    /// local settings file (`p`) or are kept for the session only.
    remembered: Mutex<Vec<(String, Kept)>>,
    /// The running prompt's cancellation: a question stops waiting when it fires.
    cancel: Mutex<CancellationToken>,
    /// The managed source of `allowManagedPermissionRulesOnly`: "always for this project"
    /// saves nothing.
    managed_rules_only: Option<String>,
    /// Where the settings files it saves are recorded for the session's sandbox.
    own_writes: Mutex<Option<Arc<spine_process::OwnWrites>>>,
}

impl TerminalApprover {
    /// An approver for a run in `project` with `settings`.
    pub fn new(project: PathBuf, status: Option<Arc<StatusLine>>, settings: &spine_settings::Settings) -> Self {
        TerminalApprover {
            status,
            project,
            remembered: Mutex::new(Vec::new()),
            cancel: Mutex::new(CancellationToken::new()),
            managed_rules_only: settings.managed.permission_rules_only.as_ref().map(ToString::to_string),
            own_writes: Mutex::new(None),
        }
    }

    /// The cancellation of the prompt that runs now (questions stop waiting when it fires).
    pub fn set_cancel(&self, cancel: CancellationToken) {
        *self.cancel.lock().unwrap_or_else(PoisonError::into_inner) = cancel;
    }

    /// The rules answered "always" in this session that no settings file keeps: `a`, or a `p`
    /// whose rules could not be saved.
    pub fn session_rules(&self) -> Vec<String> {
        let remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
        remembered.iter().filter(|(_, kept)| *kept == Kept::Session).map(|(rule, _)| rule.clone()).collect()
    }

    /// Forgets `rule`, however it was remembered in this session: the next call it covered
    /// asks again (unless a configured rule allows it). Whether it was remembered.
    pub fn forget(&self, rule: &str) -> bool {
        let mut remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
        let before = remembered.len();
        remembered.retain(|(r, _)| r != rule);
        remembered.len() != before
    }

    /// The project whose local settings file `p` writes.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// Takes `rule` out of the project's local settings file (where `p` stored it), recorded as
    /// spine's own write like a save; the file written, or why nothing was.
    pub fn unsave(&self, rule: &str) -> Result<PathBuf, String> {
        let file = super::project_rules::remove_project_allow_rules(&self.project, &[rule.to_owned()])?;
        let own_writes = self.own_writes.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let (Some(writes), Ok(bytes)) = (own_writes, std::fs::read(&file)) {
            writes.record(&file, bytes);
        }
        Ok(file)
    }

    /// The lines before the choices: the rules "always" remembers and where each answer keeps
    /// them.
    fn always_lines(&self, rules: &[String]) -> String {
        let rules = rules.join(", ");
        let project = match &self.managed_rules_only {
            Some(by) => format!("for this session only (`allowManagedPermissionRulesOnly` in {by}: nothing is saved)"),
            None => {
                let file = super::project_rules::project_rules_file(&self.project);
                let shown = file.strip_prefix(&self.project).unwrap_or(&file).display().to_string();
                format!("adds {rules} to this project's {shown}")
            }
        };
        format!("  \"always\" remembers {rules}\n    a → for this session\n    p → {project}\n")
    }
}

/// How a rule answered "always" is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// In this session only.
    Session,
    /// Also in the project's local settings file.
    Saved,
}

/// What the person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    Yes,
    No(Option<String>),
    Session,
    Project,
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        let rules = covering_rules(request.tool_name, request.args, &self.project);
        if let Some(rules) = &rules {
            let remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
            if rules.iter().all(|r| remembered.iter().any(|(known, _)| known == r)) {
                return Approval::Allow;
            }
        }
        if let Some(status) = &self.status {
            status.suspend();
        }
        let cancel = self.cancel.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let always = rules.as_deref().map(|rules| self.always_lines(rules));
        let answer = ask(request, always, cancel).await;
        let approval = match answer {
            Ok(Answer::Yes) => Approval::Allow,
            Ok(Answer::No(reason)) => {
                Approval::Deny { reason: reason.unwrap_or_else(|| "the user declined".to_owned()) }
            }
            Ok(Answer::Session) => {
                self.remember(rules.unwrap_or_default(), Kept::Session);
                Approval::Allow
            }
            Ok(Answer::Project) => {
                let rules = rules.unwrap_or_default();
                let own_writes = self.own_writes.lock().unwrap_or_else(PoisonError::into_inner).clone();
                let (saved, note) = save_project_rules(
                    &self.project,
                    &rules,
                    self.managed_rules_only.as_deref(),
                    own_writes.as_deref(),
                );
                self.remember(rules, if saved { Kept::Saved } else { Kept::Session });
                let _ = writeln!(std::io::stderr().lock(), "{note}");
                Approval::Allow
            }
            Err(reason) => Approval::Deny { reason },
        };
        if let Some(status) = &self.status {
            status.resume();
        }
        approval
    }

    /// An MCP server's question, asked field by field ([`super::elicit`]).
    async fn elicit(&self, request: &ElicitationRequest) -> Option<ElicitationAnswer> {
        if let Some(status) = &self.status {
            status.suspend();
        }
        let cancel = self.cancel.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let request = request.clone();
        let answer =
            tokio::task::spawn_blocking(move || super::elicit::ask(&request, &mut super::elicit::Terminal { cancel }))
                .await
                .unwrap_or_else(|_| ElicitationAnswer::cancel());
        if let Some(status) = &self.status {
            status.resume();
        }
        Some(answer)
    }

    /// The person at the terminal answers.
    fn asks_elicitations(&self) -> bool {
        true
    }

    fn record_writes_in(&self, writes: Arc<spine_process::OwnWrites>) {
        *self.own_writes.lock().unwrap_or_else(PoisonError::into_inner) = Some(writes);
    }
}

impl TerminalApprover {
    fn remember(&self, rules: Vec<String>, kept: Kept) {
        let mut remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
        for rule in rules {
            match remembered.iter_mut().find(|(known, _)| *known == rule) {
                Some(known) => known.1 = kept,
                None => remembered.push((rule, kept)),
            }
        }
    }
}

/// Asks on stderr and reads the answer (and a reason after a bare `n`) from stdin; `always`
/// is what "always" would remember and where ([`TerminalApprover::always_lines`]), when it is
/// offered.
async fn ask(
    request: &ApprovalRequest<'_>,
    always: Option<String>,
    cancel: CancellationToken,
) -> Result<Answer, String> {
    let (remembers, choices) = match always {
        Some(lines) => (lines, "[y]es / [n]o (reason) / [a]lways this session / always for this [p]roject"),
        None => (String::new(), "[y]es / [n]o (reason)"),
    };
    let always = !remembers.is_empty();
    let question = format!(
        "Allow {} {}?\n  asked by {}: {}\n{remembers}{choices}: ",
        request.tool_name,
        Value::Object(request.args.clone()),
        asked_by(request.asked_by),
        request.reason
    );
    tokio::task::spawn_blocking(move || {
        let line = prompt(&question, &cancel)?;
        let answer = parse_answer(&line, always);
        match answer {
            Answer::No(None) if line.trim().eq_ignore_ascii_case("n") || line.trim().eq_ignore_ascii_case("no") => {
                let reason = prompt("Reason for the model (Enter to skip): ", &cancel)?;
                let reason = reason.trim();
                Ok(Answer::No((!reason.is_empty()).then(|| reason.to_owned())))
            }
            other => Ok(other),
        }
    })
    .await
    .map_err(|e| format!("could not ask: {e}"))?
}

/// Who asked for approval, for the question.
fn asked_by(source: &DecisionSource) -> String {
    match source {
        DecisionSource::Default => "the permission mode's default".to_owned(),
        DecisionSource::Mode => "the permission mode".to_owned(),
        DecisionSource::Rule { rule } => format!("the rule {rule}"),
        DecisionSource::Hook { hook_id } => format!("the PreToolUse hook {hook_id}"),
        DecisionSource::Workspace => "the workspace boundary (a protected path)".to_owned(),
        DecisionSource::PermissionRequestHook { hook_id } => format!("the PermissionRequest hook {hook_id}"),
        DecisionSource::Approver => "the approver".to_owned(),
        DecisionSource::Skill { skill } => format!("the skill {skill}"),
    }
}

/// Writes `text` and reads one line from stdin, waiting in short polls so that a canceled
/// turn stops the wait (nothing is read then).
pub(super) fn prompt(text: &str, cancel: &CancellationToken) -> Result<String, String> {
    use std::os::fd::AsFd;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
    drop(err);
    let stdin = std::io::stdin();
    loop {
        if cancel.is_cancelled() {
            let _ = writeln!(std::io::stderr().lock());
            return Err("canceled before an answer".to_owned());
        }
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(POLL_MS)) {
            Ok(0) => continue,
            Ok(_) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(format!("could not read the answer: {e}")),
        }
    }
    let mut line = String::new();
    stdin.lock().read_line(&mut line).map_err(|e| format!("could not read the answer: {e}"))?;
    Ok(line)
}

/// Asks a yes/no `question` on the terminal; only `y` or `yes` is a yes (a canceled wait, an
/// unreadable answer or anything else is a no).
pub fn confirm(question: &str, cancel: &CancellationToken) -> bool {
    prompt(question, cancel).is_ok_and(|line| matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

/// How long one wait for the answer lasts before the cancellation is looked at again.
const POLL_MS: u16 = 100;

/// The answer a line means. Anything unrecognised is a no (fail closed).
fn parse_answer(line: &str, always: bool) -> Answer {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(w, r)| (w, r.trim()));
    match (word.to_ascii_lowercase().as_str(), always) {
        ("y" | "yes", _) => Answer::Yes,
        ("a" | "always", true) => Answer::Session,
        ("p" | "project", true) => Answer::Project,
        ("n" | "no", _) if !rest.is_empty() => Answer::No(Some(rest.to_owned())),
        _ => Answer::No(None),
    }
}

/// Saves "always for this project" rules to the project's `.spine/settings.local.json`, unless
/// managed settings allow only their own rules (`managed_only`: their source); whether they
/// were saved, and the line that says what became of them.
fn save_project_rules(
    project: &Path,
    rules: &[String],
    managed_only: Option<&str>,
    own_writes: Option<&spine_process::OwnWrites>,
) -> (bool, String) {
    if let Some(by) = managed_only {
        return (
            false,
            format!(
                "Not saved: `allowManagedPermissionRulesOnly` in {by} lets only managed settings add allow rules; \
                 allowed for this session only"
            ),
        );
    }
    match super::project_rules::add_project_allow_rules(project, rules) {
        Ok(file) => {
            if let (Some(writes), Ok(bytes)) = (own_writes, std::fs::read(&file)) {
                writes.record(&file, bytes);
            }
            (true, format!("Added {} to {}", rules.join(", "), file.display()))
        }
        Err(e) => (false, format!("Not saved ({e}); allowed for this session only")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_yes_no_with_a_reason_session_or_project_and_anything_else_is_no() {
        assert_eq!(parse_answer("y\n", true), Answer::Yes);
        assert_eq!(parse_answer("YES", false), Answer::Yes);
        assert_eq!(parse_answer("a", true), Answer::Session);
        assert_eq!(parse_answer("p", true), Answer::Project);
        assert_eq!(parse_answer("n use the staging db\n", true), Answer::No(Some("use the staging db".into())));
        assert_eq!(parse_answer("n", true), Answer::No(None));
        assert_eq!(parse_answer("a", false), Answer::No(None), "no always without a narrow rule");
        assert_eq!(parse_answer("", true), Answer::No(None));
        assert_eq!(parse_answer("sure", true), Answer::No(None));
    }

    fn approver(project: &Path, managed_rules_only: Option<String>) -> TerminalApprover {
        TerminalApprover {
            status: None,
            project: project.to_path_buf(),
            remembered: Mutex::new(Vec::new()),
            cancel: Mutex::new(CancellationToken::new()),
            managed_rules_only,
            own_writes: Mutex::new(None),
        }
    }

    #[test]
    fn the_question_says_where_each_always_keeps_the_rules_it_would_store() {
        let rules = ["Bash(npm test:*)".to_owned(), "Bash(git status:*)".to_owned()];
        assert_eq!(
            approver(Path::new("/p"), None).always_lines(&rules),
            "  \"always\" remembers Bash(npm test:*), Bash(git status:*)\n    a → for this session\n    \
             p → adds Bash(npm test:*), Bash(git status:*) to this project's .spine/settings.local.json\n"
        );
        let managed = approver(Path::new("/p"), Some("/etc/m.json".into())).always_lines(&rules);
        assert!(managed.contains("p → for this session only (`allowManagedPermissionRulesOnly` in /etc/m.json"));
    }

    #[test]
    fn a_forgotten_rule_is_no_longer_remembered_however_it_was_kept() {
        let a = approver(Path::new("/p"), None);
        a.remember(vec!["Bash(ls:*)".into(), "Read".into()], Kept::Session);
        a.remember(vec!["Bash(echo:*)".into()], Kept::Saved);
        assert_eq!(a.session_rules(), ["Bash(ls:*)", "Read"], "a saved rule is the project's, not the session's");
        assert!(a.forget("Bash(echo:*)") && a.forget("Read") && !a.forget("Read"));
        assert_eq!(a.session_rules(), ["Bash(ls:*)"]);
    }

    #[test]
    fn project_rules_are_not_saved_when_managed_settings_allow_only_their_own_rules() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".spine/settings.local.json");
        let (saved, note) =
            save_project_rules(dir.path(), &["Read".into()], Some("/etc/spine/managed-settings.json (managed)"), None);
        assert!(!saved && note.starts_with("Not saved: `allowManagedPermissionRulesOnly` in /etc/spine/"), "{note}");
        assert!(!path.exists());
        let (saved, note) = save_project_rules(dir.path(), &["Read".into()], None, None);
        assert!(saved && note.starts_with("Added Read to"), "{note}");
        assert!(path.exists());
    }
}
