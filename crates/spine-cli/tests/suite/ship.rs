//! What an installed binary offers beside running agents: `--version` with the commit and the
//! build date, shell completions that the shells load, and a manual page.

use crate::support::*;

#[test]
fn version_names_the_package_version_the_commit_and_the_build_date() {
    let s = Sandbox::new();
    let out = s.spine().arg("--version").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let version = text.trim().strip_prefix("spine ").expect("spine VERSION");
    let (package, rest) = version.split_once(" (").expect("a parenthesis");
    assert_eq!(package, env!("CARGO_PKG_VERSION"));
    let (commit, date) = rest.trim_end_matches(')').split_once(' ').expect("commit and date");
    assert!(commit == "unknown" || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())), "{text}");
    let parts: Vec<&str> = date.split('-').collect();
    assert!(parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok()), "{text}");
}

#[test]
fn the_bash_completion_script_loads_in_bash_and_completes_subcommands() {
    let s = Sandbox::new();
    let out = s.spine().args(["completions", "bash"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let script = s.dir.path().join("spine.bash");
    std::fs::write(&script, &out.stdout).expect("write");
    // Load it in a real bash and ask for the completions of `spine se`.
    let probe = format!(
        "source {}; COMP_WORDS=(spine se); COMP_CWORD=1; COMP_LINE='spine se'; COMP_POINT=8; _spine spine se spine; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        shell_quote(&script.to_string_lossy())
    );
    let bash = std::process::Command::new("bash").args(["-c", &probe]).output().expect("bash runs");
    let completions = String::from_utf8_lossy(&bash.stdout);
    assert!(bash.status.success(), "{}", String::from_utf8_lossy(&bash.stderr));
    assert!(completions.lines().any(|l| l == "sessions"), "{completions}");
}

#[test]
fn zsh_and_fish_scripts_name_spine_and_its_commands() {
    let s = Sandbox::new();
    let zsh = stdout(&s.spine().args(["completions", "zsh"]).output().expect("runs"));
    assert!(zsh.starts_with("#compdef spine") && zsh.contains("'sessions:"), "{zsh}");
    let fish = stdout(&s.spine().args(["completions", "fish"]).output().expect("runs"));
    assert!(fish.contains("complete -c spine") && fish.contains("-a \"chat\""), "{fish}");
}

#[test]
fn the_manual_page_is_roff_with_every_command() {
    let s = Sandbox::new();
    let out = s.spine().arg("man").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(page.contains(".TH spine 1"), "{page}");
    for command in ["run", "chat", "hooks", "trace", "worker", "sessions", "completions"] {
        assert!(page.contains(&format!("spine\\-{command}(1)")) || page.contains(command), "{command}");
    }
}
