//! What reading an installed plugin's files, agents and skills gave is remembered across runs in
//! `$SPINE_HOME/cache/parsed/<project>.memo` while each file is unchanged, through the binary: a
//! run uses the remembered hooks, agent directory listing, agent and skill (shown here by editing
//! what the memo holds), a changed file is parsed again, a file written less than two seconds ago is not
//! remembered, and an unreadable memo file changes nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// Installs the plugin `kit@market` for the user, with a PreToolUse hook on `Bash`, the agent
/// `helper` and the skill `notes`; returns its directory.
fn install_kit(s: &Sandbox) -> PathBuf {
    let root = s.home().join("plugins/cache/market/kit/1.0.0");
    let write = |rel: &str, text: &str| spine_testkit::files::write_file(&root, rel, text);
    write(".claude-plugin/plugin.json", &json!({"name": "kit", "version": "1.0.0"}).to_string());
    let hook = json!({"type": "command", "command": "true"});
    write("hooks/hooks.json", &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}).to_string());
    write("agents/helper.md", "---\nname: helper\ndescription: Helps.\n---\nYou help.\n");
    write("skills/notes/SKILL.md", "---\nname: notes\ndescription: Takes notes.\n---\nBody\n");
    let installed =
        json!({"version": 2, "plugins": {"kit@market": [{"scope": "user", "installPath": root, "version": "1.0.0"}]}});
    spine_testkit::files::write_file(&s.home(), "plugins/installed_plugins.json", &installed.to_string());
    spine_testkit::files::write_file(
        &s.home(),
        "settings.json",
        &json!({"enabledPlugins": {"kit@market": true}}).to_string(),
    );
    root.canonicalize().expect("plugin root")
}

/// Long enough for a file's stamp to settle (the memo keeps only files older than 2 s).
fn settle() {
    std::thread::sleep(Duration::from_millis(2200));
}

/// The `init` line of a scripted `spine run -p` in stream-json.
fn init(s: &Sandbox) -> Value {
    let script = s.script(json!([{"text": "done"}]));
    let out = s.run(&script, &["--output-format", "stream-json", "--verbose"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = stdout(&out).lines().next().map(str::to_owned).unwrap_or_default();
    serde_json::from_str(&first).expect("the init line")
}

/// The project's memo file (named as its session folder is).
fn memo_file(s: &Sandbox) -> PathBuf {
    let project = s.project().canonicalize().expect("project");
    let name: String =
        project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    s.home().join("cache/parsed").join(format!("{name}.memo"))
}

/// The memo file's header line, and each entry's key and line (a JSON key, the stamp, the
/// last use and the value's JSON, separated by tabs).
fn memo(s: &Sandbox) -> (String, Vec<(String, String)>) {
    let text = std::fs::read_to_string(memo_file(s)).expect("the memo file");
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().to_owned();
    let entries = lines
        .map(|line| {
            let key = line.split('\t').next().unwrap_or_default();
            (serde_json::from_str::<String>(key).expect("a JSON key"), line.to_owned())
        })
        .collect();
    (header, entries)
}

/// Rewrites the remembered value of `file` (any kind) with `edit`.
fn edit_memo(s: &Sandbox, file: &Path, edit: impl Fn(&mut Value)) {
    let (header, entries) = memo(s);
    let mut found = false;
    let mut text = format!("{header}\n");
    for (key, line) in entries {
        let mut fields: Vec<String> = line.splitn(4, '\t').map(str::to_owned).collect();
        if key_part(&key, 1) == file.to_str().expect("utf8") {
            let mut value: Value = serde_json::from_str(&fields[3]).expect("a JSON value");
            edit(&mut value);
            fields[3] = value.to_string();
            found = true;
        }
        text.push_str(&fields.join("\t"));
        text.push('\n');
    }
    assert!(found, "an entry for {}", file.display());
    std::fs::write(memo_file(s), text).expect("write memo");
}

/// Part `n` of a key: its kind (before the first space), path, or context (after the last).
fn key_part(key: &str, n: usize) -> &str {
    let (kind, rest) = key.split_once(' ').unwrap_or((key, ""));
    let (path, context) = rest.rsplit_once(' ').unwrap_or((rest, ""));
    [kind, path, context][n]
}

fn listed(init: &Value, field: &str, name: &str) -> bool {
    init[field].as_array().is_some_and(|a| a.contains(&json!(name)))
}

fn hooks_list(s: &Sandbox) -> String {
    let out = s.spine().args(["hooks", "list"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn an_unchanged_plugin_file_is_read_from_the_memo_and_a_changed_one_is_parsed_again() {
    let s = Sandbox::new();
    let root = install_kit(&s);
    settle();
    let first = init(&s);
    assert!(listed(&first, "skills", "kit:notes") && listed(&first, "agents", "kit:helper"), "{first}");
    let kinds: Vec<String> = memo(&s).1.iter().map(|(key, _)| key_part(key, 0).to_owned()).collect();
    for kind in ["plugin.files.v1", "plugin.agent-paths.v1", "plugin.agent.v1", "skill-dirs.v1", "skill.v1"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} remembered: {kinds:?}");
    }

    // What the memo holds is what the next run uses: the files are not read again.
    let skill = root.join("skills/notes/SKILL.md");
    let agent = root.join("agents/helper.md");
    edit_memo(&s, &skill, |v| v["Ok"][0]["name"] = json!("remembered"));
    edit_memo(&s, &agent, |v| v["Ok"][0]["name"] = json!("remembered-agent"));
    edit_memo(&s, &root, |v| v["Ok"]["hooks"][0][1]["PreToolUse"][0]["hooks"][0]["command"] = json!("remembered-hook"));
    let second = init(&s);
    assert!(listed(&second, "skills", "kit:remembered") && !listed(&second, "skills", "kit:notes"), "{second}");
    assert!(listed(&second, "agents", "kit:remembered-agent"), "{second}");
    assert!(hooks_list(&s).contains("remembered-hook"), "{}", hooks_list(&s));

    // A changed file (same size, so only its times and content differ) is parsed again.
    std::fs::write(&skill, "---\nname: NOTES\ndescription: Takes notes.\n---\nBody\n").expect("edit skill");
    std::fs::write(&agent, "---\nname: HELPER\ndescription: Helps.\n---\nYou help.\n").expect("edit agent");
    let hooks = root.join("hooks/hooks.json");
    let text = std::fs::read_to_string(&hooks).expect("hooks").replace("\"true\"", "\"echo\"");
    std::fs::write(&hooks, text).expect("edit hooks");
    let third = init(&s);
    assert!(listed(&third, "skills", "kit:NOTES") && listed(&third, "agents", "kit:HELPER"), "{third}");
    let listing = hooks_list(&s);
    assert!(listing.contains("echo") && !listing.contains("remembered-hook"), "{listing}");
}

#[test]
fn a_file_written_within_two_seconds_is_not_remembered_and_a_bad_memo_file_changes_nothing() {
    let s = Sandbox::new();
    install_kit(&s);
    let fresh = init(&s);
    assert!(listed(&fresh, "skills", "kit:notes"), "{fresh}");
    assert!(!memo_file(&s).exists(), "nothing settled, nothing remembered");

    settle();
    std::fs::create_dir_all(memo_file(&s).parent().expect("dir")).expect("cache dir");
    std::fs::write(memo_file(&s), "{not json").expect("write");
    let after = init(&s);
    assert!(listed(&after, "skills", "kit:notes") && listed(&after, "agents", "kit:helper"), "{after}");
    assert!(hooks_list(&s).contains("Bash"));
    let header = format!("spine parse memo 1, spine {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(memo(&s).0, header, "rewritten whole");
}
