//! `/permissions` in an interactive session: the rules in force with their sources, what
//! "always" answers remember, and forgetting one of those.
//!
//! Contract:
//! - `/permissions` shows the mode; the rules the policy decides with now, each with the
//!   settings file (or the command line, or "added in this session" for a hook's
//!   `updatedPermissions`) it came from; then, numbered in one sequence, what this session
//!   remembers (rules answered `a`, or `p` when they could not be saved) and what this project
//!   remembers (the `permissions.allow` rules of `<project>/.spine/settings.local.json`, where
//!   `p` stores them — read from the file each time).
//! - `/permissions forget N` (or `/permissions remove RULE`) forgets that rule wherever an
//!   approval keeps it: the session's memory, and the project's local settings file (its
//!   other keys and rules kept, never written through a link). When the policy in force holds
//!   the rule from that file (it was there when the session opened, or a PermissionRequest
//!   hook's update stored it there), it is taken out of the policy too (a `removeRules` update
//!   of `localSettings`), so the next call it covered asks again; a rule another settings file
//!   also holds stays in force, and the reply names that file.
//! - A number or rule that names nothing remembered changes nothing and says so on one line.

use spine_protocol::permission_update::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};
use spine_settings::{Origin, RuleEntry};

use super::Chat;
use crate::render::project_rules::{project_allow_rules, project_rules_file};

/// What "always" answers remember, in the order `/permissions` numbers them.
struct Remembered {
    /// Rules this session remembers (no file keeps them).
    session: Vec<String>,
    /// The project's local settings file's allow rules, or why it could not be read.
    project: Result<Vec<String>, String>,
}

impl Remembered {
    /// The rule numbered `n` (from 1).
    fn nth(&self, n: usize) -> Option<&String> {
        let project = self.project.as_deref().unwrap_or_default();
        self.session.iter().chain(project).nth(n.checked_sub(1)?)
    }
}

impl Chat {
    /// `/permissions` with the rest of its line (see the module contract).
    pub(super) fn permissions(&mut self, change: Option<&str>) {
        let Some(change) = change else {
            println!("{}", self.permissions_text());
            return;
        };
        let remembered = self.remembered();
        let (verb, what) = change.split_once(char::is_whitespace).map_or((change, ""), |(v, w)| (v, w.trim()));
        let rule = match verb {
            "forget" => match what.parse::<usize>().ok().and_then(|n| remembered.nth(n)) {
                Some(rule) => rule.clone(),
                None => {
                    println!("/permissions forget {what}: no such number (see /permissions)");
                    return;
                }
            },
            "remove" if !what.is_empty() => what.to_owned(),
            _ => {
                println!("usage: /permissions [forget N | remove RULE]");
                return;
            }
        };
        println!("{}", self.forget(&rule, &remembered));
    }

    fn remembered(&self) -> Remembered {
        Remembered { session: self.approver.session_rules(), project: project_allow_rules(&self.project()) }
    }

    fn project(&self) -> std::path::PathBuf {
        self.approver.project().to_path_buf()
    }

    /// Forgets `rule` everywhere an approval keeps it; the lines saying what changed.
    fn forget(&mut self, rule: &str, remembered: &Remembered) -> String {
        let in_session = remembered.session.iter().any(|r| r == rule);
        let remembered_now = self.approver.forget(rule);
        let in_file = remembered.project.as_ref().is_ok_and(|rules| rules.iter().any(|r| r == rule));
        if !in_session && !in_file && !remembered_now {
            return format!("{rule} is not remembered (see /permissions)");
        }
        let mut lines = Vec::new();
        if in_session {
            lines.push(format!("Forgot {rule} for this session."));
        }
        if in_file {
            match self.approver.unsave(rule) {
                Ok(file) => lines.push(format!("Removed {rule} from {}.", file.display())),
                Err(e) => lines.push(format!("Could not remove {rule} from the project's settings: {e}")),
            }
            let file = project_rules_file(&self.project());
            let held = |e: &&RuleEntry| e.rule == rule && matches!(&e.origin, Origin::Local(p) if same_file(p, &file));
            let elsewhere: Vec<String> = self
                .settings
                .permissions
                .allow
                .iter()
                .filter(|e| e.rule == rule && !held(e))
                .map(|e| e.origin.to_string())
                .collect();
            if elsewhere.is_empty() {
                let update = PermissionUpdate::RemoveRules {
                    rules: vec![RuleValue::from_rule(rule)],
                    behavior: RuleBehavior::Allow,
                    destination: UpdateDestination::LocalSettings,
                };
                let config = &self.agent.config;
                for applied in self.agent.policy.apply_updates(&[update], &config.workspace, &config.cwd) {
                    if !applied.applied {
                        lines.push(format!("The rule stays in force: {}", applied.note.unwrap_or_default()));
                    }
                }
            }
            if !elsewhere.is_empty() {
                lines.push(format!("{rule} is still allowed by {}.", elsewhere.join(", ")));
                return lines.join("\n");
            }
        }
        lines.push("The next call it covered asks again.".to_owned());
        lines.join("\n")
    }

    fn permissions_text(&self) -> String {
        let mut text = format!("mode: {}\nrules in force:", self.agent.policy.mode().as_str());
        let in_force = self.agent.policy.rules_in_force();
        let configured = self.agent.policy.rules();
        let p = &self.settings.permissions;
        let lists = [
            ("deny", &p.deny, &in_force.deny, &configured.deny),
            ("ask", &p.ask, &in_force.ask, &configured.ask),
            ("allow", &p.allow, &in_force.allow, &configured.allow),
        ];
        let mut any = false;
        for (behavior, entries, now, before) in lists {
            let holds =
                |list: &[spine_core::permission::PermissionRule], rule: &str| list.iter().any(|r| r.as_str() == rule);
            for e in entries.iter().filter(|e| holds(now, &e.rule)) {
                text.push_str(&format!("\n  {behavior:<5} {:<32} {} {}", e.rule, e.origin, e.path));
                any = true;
            }
            for r in now.iter().filter(|r| !entries.iter().any(|e| e.rule == r.as_str())) {
                let from = if holds(before, r.as_str()) { "the command line" } else { "added in this session" };
                text.push_str(&format!("\n  {behavior:<5} {:<32} {from}", r.as_str()));
                any = true;
            }
        }
        if !any {
            text.push_str("\n  no rules");
        }
        let remembered = self.remembered();
        text.push_str("\nremembered by \"always\" answers:\n  this session:");
        let mut n = 0;
        for rule in &remembered.session {
            n += 1;
            text.push_str(&format!("\n    {n}. {rule}"));
        }
        if remembered.session.is_empty() {
            text.push_str(" nothing");
        }
        text.push_str(&format!("\n  this project ({}):", project_rules_file(&self.project()).display()));
        match &remembered.project {
            Ok(rules) if rules.is_empty() => text.push_str(" nothing"),
            Ok(rules) => {
                for rule in rules {
                    n += 1;
                    text.push_str(&format!("\n    {n}. {rule}"));
                }
            }
            Err(e) => text.push_str(&format!(" cannot be read: {e}")),
        }
        if n > 0 {
            text.push_str(
                "\n/permissions forget N (or /permissions remove RULE) forgets one: its next call asks again.",
            );
        }
        if !self.settings.trust.is_trusted() && !self.settings.withheld.is_empty() {
            text.push_str(&format!(
                "\nthe project is untrusted: its allow rules and hooks are withheld (`spine trust {}`)",
                self.agent.config.workspace.root().display()
            ));
        }
        text
    }
}

/// Whether two paths name the same file (also through a symbolic link in a folder above).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_rules_are_numbered_first_then_the_projects_from_one() {
        let remembered = Remembered {
            session: vec!["Bash(ls:*)".into()],
            project: Ok(vec!["Bash(npm test:*)".into(), "Read".into()]),
        };
        let nth = |n| remembered.nth(n).map(String::as_str);
        assert_eq!(
            (nth(0), nth(1), nth(2), nth(3), nth(4)),
            (None, Some("Bash(ls:*)"), Some("Bash(npm test:*)"), Some("Read"), None)
        );
        let unreadable = Remembered { session: Vec::new(), project: Err("not JSON".into()) };
        assert_eq!(unreadable.nth(1), None);
    }
}
